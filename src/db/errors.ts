// What a database failure may say about itself, and whether it means "the database is not
// there" (503 while PostgreSQL is down, never a 500). Drizzle wraps a driver's error in
// one whose message holds the SQL *and its parameters* (emails, hashes): only the
// driver's SQLSTATE code and message may reach the log (CONTRACT §8, Logs).

export interface DatabaseFailure {
  code: string | undefined
  message: string
}

// SQLSTATE class 08 (connection exception) and 57P01-57P04 (the server is shutting down,
// crashed, starting or dropping the database), and the socket errors node-postgres passes on.
const UNAVAILABLE_CODES =
  /^(08...|57P0[1-4]|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/
// node-postgres reports a lost or refused connection by message alone, without a code.
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|Query read timeout/

/** The driver's error in a `cause` chain (under Drizzle's wrapper), if there is one. */
export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  let wrapped = false
  let current = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    const codeText = typeof code === 'string' ? code : undefined
    const driver =
      'severity' in current || // a server error, from node-postgres or PGlite
      UNAVAILABLE_MESSAGES.test(current.message) ||
      (codeText !== undefined && UNAVAILABLE_CODES.test(codeText))
    if (driver) return { code: codeText, message: withoutValue(current.message) }
    // Drizzle's DrizzleQueryError: its message is the SQL and its parameters.
    if ('query' in current && 'params' in current) wrapped = true
    else if (wrapped) return { code: codeText, message: withoutValue(current.message) }
    current = current.cause
  }
  return wrapped ? { code: undefined, message: 'query failed' } : undefined
}

/**
 * PostgreSQL echoes the offending input in some messages (`invalid input syntax for type
 * uuid: "…"`): the quoted value is dropped, the kind of failure kept.
 */
function withoutValue(message: string): string {
  return message.replace(/: ".*$/s, '')
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const failure = databaseFailure(error)
  if (!failure) return false
  return (
    (failure.code !== undefined && UNAVAILABLE_CODES.test(failure.code)) ||
    UNAVAILABLE_MESSAGES.test(failure.message)
  )
}

/**
 * An error as the log shows it (the logger's `err` serializer): a database failure by its
 * code and message alone, anything else with its type, message, code and stack.
 */
export function loggableError(error: Error): {
  type: string
  message: string
  stack: string
  [key: string]: unknown
} {
  const failure = databaseFailure(error)
  if (failure) return { type: 'DatabaseError', stack: '', ...failure }
  return {
    type: error.constructor?.name ?? 'Error',
    message: error.message,
    code: (error as { code?: unknown }).code,
    stack: error.stack ?? '',
  }
}

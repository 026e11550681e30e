// Where a session client keeps its token envelope: any object with get/set/remove of
// strings, synchronous or not (localStorage, a cookie jar, React Native's AsyncStorage, …).

export interface SessionStore {
  get(key: string): string | null | undefined | Promise<string | null | undefined>
  set(key: string, value: string): void | Promise<void>
  remove(key: string): void | Promise<void>
}

/** The default store: this page or process only, gone when it ends. */
export function memoryStore(): SessionStore {
  const items = new Map<string, string>()
  return {
    get: (key) => items.get(key) ?? null,
    set: (key, value) => {
      items.set(key, value)
    },
    remove: (key) => {
      items.delete(key)
    },
  }
}

/** The part of the Web Storage API the localStorage store uses. */
export interface StorageLike {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * A store in `localStorage` (or another Storage): shared by every tab of the origin, so
 * the tabs share one session. Their refreshes take turns under the Web Locks API.
 */
export function localStorageStore(storage?: StorageLike): SessionStore {
  const target = () => {
    const found = storage ?? (globalThis as { localStorage?: StorageLike }).localStorage
    if (!found) throw new TypeError('localStorageStore: no localStorage here')
    return found
  }
  return {
    get: (key) => target().getItem(key),
    set: (key, value) => target().setItem(key, value),
    remove: (key) => target().removeItem(key),
  }
}

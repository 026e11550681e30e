// Rows become responses only through these functions (never a row as a response); the
// user record's are in record.ts.
import type { Config } from '../../config.ts'
/** The logo's address; "" when there is none (SPEC types logoUrl as a required string). */
export function logoUrl(config: Config, slug: string, hasLogo: boolean): string {
  return hasLogo ? `${config.publicUrl}/v1/${slug}/logo` : ''
}

// The browser and operating-system families of a User-Agent header, for people to read
// ("Firefox on Windows") and for the new-device check (CONTRACT §9): coarse on purpose,
// so that a browser update is not a new device. Versions are never kept.

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChrome\/|\bCriOS\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
]

const SYSTEMS: [RegExp, string][] = [
  [/\bWindows\b/, 'Windows'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
]

export interface UserAgentFamily {
  browser: string
  os: string
}

export function userAgentFamily(userAgent: string | null | undefined): UserAgentFamily {
  const ua = userAgent ?? ''
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1] ?? 'Other'
  const os = SYSTEMS.find(([re]) => re.test(ua))?.[1] ?? 'Other'
  return { browser, os }
}

/** "Firefox on Windows", or "an unknown browser". */
export function describeUserAgent(userAgent: string | null | undefined): string {
  const { browser, os } = userAgentFamily(userAgent)
  if (browser === 'Other' && os === 'Other') return 'an unknown browser'
  if (os === 'Other') return browser === 'Other' ? 'an unknown browser' : browser
  return `${browser === 'Other' ? 'A browser' : browser} on ${os}`
}

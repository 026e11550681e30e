// The ALTCHA widget's glue (CONTRACT §21), loaded after the widget's own module on the
// pages that show it: the strict-CSP build of the widget brings no worker, so its PBKDF2
// worker is served by the service (/assets/altcha/pbkdf2.js) and registered here; and the
// widget speaks the page's language with the words the page put on it (data-strings).
const altcha = globalThis.$altcha
if (altcha) {
  altcha.algorithms.set('PBKDF2/SHA-256', () => new Worker('/assets/altcha/pbkdf2.js'))
  const lang = document.documentElement.lang || 'en'
  const widget = document.querySelector('altcha-widget[data-strings]')
  try {
    const words = JSON.parse(widget?.dataset.strings ?? '{}')
    altcha.i18n.set(lang, { ...altcha.i18n.get('en'), ...words })
  } catch {
    // The widget keeps its English words.
  }
}

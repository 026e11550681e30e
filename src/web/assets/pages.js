// Progressive enhancement of the hosted pages; every page works without it.
// An error summary takes the focus, so keyboard and screen-reader users land on it.
document.addEventListener('DOMContentLoaded', () => {
  const summary = document.querySelector('[data-focus]')
  if (summary instanceof HTMLElement) summary.focus()
})

// The example is built inside the service's repository: its own folder is the root.
export default { turbopack: { root: import.meta.dirname } }

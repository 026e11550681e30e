export const metadata = { title: 'Next.js with Auth.js (tenant-auth example)' }

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body
        style={{
          font: '16px/1.5 system-ui, sans-serif',
          maxWidth: '36rem',
          margin: '3rem auto',
          padding: '0 1rem',
        }}
      >
        {children}
      </body>
    </html>
  )
}

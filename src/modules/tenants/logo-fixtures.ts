// Test images for the logo tests (test-only; nothing in the service imports this file).
// Each is a real, decodable image built byte by byte, so the tests need no image library.
import { crc32, deflateSync } from 'node:zlib'

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])))
  return Buffer.concat([head, data, crc])
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * An RGB PNG of `width`×`height` pixels; `padTo` adds a private ancillary chunk (`prVt`,
 * ignored by decoders) so that the file is exactly that many bytes long.
 */
export function png(options: { width?: number; height?: number; padTo?: number } = {}): Buffer {
  const { width = 2, height = 2 } = options
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x7f)])
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))
  const head = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', pixels)])
  const end = pngChunk('IEND', Buffer.alloc(0))
  if (options.padTo === undefined) return Buffer.concat([head, end])
  const padding = options.padTo - head.length - end.length - 12
  if (padding < 0) throw new Error('padTo is too small')
  return Buffer.concat([head, pngChunk('prVt', Buffer.alloc(padding, 0x41)), end])
}

/** A PNG whose IEND chunk is followed by `trailer`. */
export function pngWithTrailer(trailer: string): Buffer {
  return Buffer.concat([png(), Buffer.from(trailer)])
}

/** A PNG whose IDAT chunk no longer matches its CRC. */
export function pngWithBadCrc(): Buffer {
  const bytes = Buffer.from(png())
  // Flip one bit of the IDAT data: its CRC no longer matches.
  bytes[8 + 25 + 8] ^= 0x01
  return bytes
}

/**
 * A baseline JPEG (ITU-T T.81): 8×8 pixels, one grey component, one quantisation table
 * of ones and one-symbol Huffman tables; the single block is DC 0 then end-of-block.
 */
export function jpeg(): Buffer {
  const seg = (marker: number, body: number[]) => [
    0xff,
    marker,
    ((body.length + 2) >> 8) & 0xff,
    (body.length + 2) & 0xff,
    ...body,
  ]
  const oneCode = [1, ...Array(15).fill(0)] // one code of length 1 …
  return Buffer.from([
    0xff,
    0xd8, // SOI
    ...seg(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]), // APP0 JFIF
    ...seg(0xdb, [0x00, ...Array(64).fill(1)]), // DQT
    ...seg(0xc0, [8, 0, 8, 0, 8, 1, 1, 0x11, 0]), // SOF0: 8×8, one component
    ...seg(0xc4, [0x00, ...oneCode, 0x00]), // DHT DC 0: … for category 0
    ...seg(0xc4, [0x10, ...oneCode, 0x00]), // DHT AC 0: … for end-of-block
    ...seg(0xda, [1, 1, 0x00, 0, 63, 0]), // SOS
    0x3f, // bits 0 (DC diff 0), 0 (EOB), padded with ones
    0xff,
    0xd9, // EOI
  ])
}

/** A 1×1 lossy WebP (VP8). */
export const WEBP_LOSSY = Buffer.from(
  'UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA',
  'base64',
)

/** A 1×1 lossless WebP (VP8L). */
export const WEBP_LOSSLESS = Buffer.from(
  'UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==',
  'base64',
)

export const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(1)</script></svg>',
)

export const HTML = Buffer.from('<!doctype html><html><script>alert(document.cookie)</script>')

export const b64 = (bytes: Buffer) => bytes.toString('base64')

/** A lossless WebP whose first chunk is VP8X (the extended format) declaring 1×1. */
export function webpExtended(): Buffer {
  const vp8x = Buffer.alloc(18)
  vp8x.write('VP8X', 0, 'latin1')
  vp8x.writeUInt32LE(10, 4) // flags, reserved, then canvas width-1 and height-1 (24 bits)
  const vp8l = WEBP_LOSSLESS.subarray(12)
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), vp8x, vp8l])
  const head = Buffer.alloc(8)
  head.write('RIFF', 0, 'latin1')
  head.writeUInt32LE(body.length, 4)
  return Buffer.concat([head, body])
}

/**
 * A copy of one of the images above whose header declares `width`×`height` pixels: the
 * bytes stay small and whole, as an attacker's would, only the stated size changes.
 */
export function declaringSize(image: Buffer, width: number, height: number): Buffer {
  const b = Buffer.from(image)
  if (b[0] === 0x89) {
    b.writeUInt32BE(width, 16)
    b.writeUInt32BE(height, 20)
    b.writeUInt32BE(crc32(b.subarray(12, 29)), 29) // the IHDR chunk's CRC
    return b
  }
  if (b[0] === 0xff) {
    const sof = b.indexOf(Buffer.from([0xff, 0xc0]))
    b.writeUInt16BE(height, sof + 5)
    b.writeUInt16BE(width, sof + 7)
    return b
  }
  const fourcc = b.toString('latin1', 12, 16)
  if (fourcc === 'VP8 ') {
    b.writeUInt16LE(width & 0x3fff, 26)
    b.writeUInt16LE(height & 0x3fff, 28)
  } else if (fourcc === 'VP8L') {
    const bits = b.readUInt32LE(21)
    b.writeUInt32LE(
      ((bits & 0xf0000000) | ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14)) >>> 0,
      21,
    )
  } else {
    b.writeUIntLE(width - 1, 24, 3)
    b.writeUIntLE(height - 1, 27, 3)
  }
  return b
}

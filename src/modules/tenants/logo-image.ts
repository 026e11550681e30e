// Whole-image checks for tenant logos (CONTRACT §2, Logo): the bytes must be an image of
// the stated type from its first byte to its last. A matching magic number is not enough:
// a PNG signature followed by HTML, or anything after the image's end, is refused, so the
// stored bytes can never be read as another kind of document.
import { crc32 } from 'node:zlib'

export const LOGO_MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const
export type LogoMimeType = (typeof LOGO_MIME_TYPES)[number]

export function isWholeImage(mimeType: LogoMimeType, bytes: Buffer): boolean {
  if (mimeType === 'image/png') return isPng(bytes)
  if (mimeType === 'image/jpeg') return isJpeg(bytes)
  return isWebp(bytes)
}

/** CONTRACT §8: a side longer than this is refused, read from the image's own header. */
export const LOGO_MAX_SIDE = 4096

export interface ImageSize {
  width: number
  height: number
}

/**
 * The pixel size an image declares in its header (PNG IHDR, JPEG SOFn, WebP VP8/VP8L/VP8X),
 * for an input `isWholeImage` accepted. A decoder would allocate this much, so it is the
 * size that matters, whatever the compressed bytes weigh. JPEG takes its largest frame.
 */
export function imageSize(mimeType: LogoMimeType, b: Buffer): ImageSize | undefined {
  if (mimeType === 'image/png') return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
  if (mimeType === 'image/jpeg') return jpegSize(b)
  return webpSize(b)
}

function jpegSize(b: Buffer): ImageSize | undefined {
  let size: ImageSize | undefined
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return size
    while (i < b.length && b[i] === 0xff) i++
    const marker = b[i]
    i++
    if (marker === 0xd9) return size
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue
    if (i + 2 > b.length) return size
    const length = b.readUInt16BE(i)
    if (isFrameMarker(marker) && i + 7 <= b.length) {
      // Frame header (T.81 B.2.2): Lf, P, Y (lines), X (samples per line).
      const height = b.readUInt16BE(i + 3)
      const width = b.readUInt16BE(i + 5)
      size = {
        width: Math.max(width, size?.width ?? 0),
        height: Math.max(height, size?.height ?? 0),
      }
    }
    i += length
    if (marker === 0xda) i = skipEntropyCodedData(b, i)
  }
  return size
}

function webpSize(b: Buffer): ImageSize | undefined {
  const fourcc = b.toString('latin1', 12, 16)
  const data = b.subarray(20)
  if (fourcc === 'VP8 ' && data.length >= 10) {
    // RFC 6386 §9.1: 14 bits of size, 2 of scale, after the start code.
    return { width: data.readUInt16LE(6) & 0x3fff, height: data.readUInt16LE(8) & 0x3fff }
  }
  if (fourcc === 'VP8L' && data.length >= 5) {
    const bits = data.readUInt32LE(1)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (fourcc === 'VP8X' && data.length >= 10) {
    return { width: data.readUIntLE(4, 3) + 1, height: data.readUIntLE(7, 3) + 1 }
  }
  return undefined
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * PNG (ISO/IEC 15948, W3C PNG §5): the signature, IHDR first, every chunk with a letter
 * type and a correct CRC-32, at least one IDAT, and IEND as the last byte of the input.
 */
function isPng(b: Buffer): boolean {
  if (b.length < 8 || !b.subarray(0, 8).equals(PNG_SIGNATURE)) return false
  let offset = 8
  let sawIdat = false
  while (offset + 12 <= b.length) {
    const length = b.readUInt32BE(offset)
    if (length > 0x7fffffff) return false
    const end = offset + 12 + length
    if (end > b.length) return false
    const type = b.subarray(offset + 4, offset + 8)
    if (!type.every(isAsciiLetter)) return false
    if (crc32(b.subarray(offset + 4, offset + 8 + length)) !== b.readUInt32BE(end - 4)) {
      return false
    }
    const name = type.toString('latin1')
    if (offset === 8) {
      if (name !== 'IHDR' || length !== 13) return false
      const width = b.readUInt32BE(offset + 8)
      const height = b.readUInt32BE(offset + 12)
      if (width === 0 || height === 0) return false
    } else if (name === 'IHDR') {
      return false
    }
    if (name === 'IDAT') sawIdat = true
    if (name === 'IEND') return length === 0 && sawIdat && end === b.length
    offset = end
  }
  return false
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
}

/**
 * JPEG (ITU-T T.81 Annex B): SOI, then marker segments with consistent lengths, a frame
 * header (SOFn) before the first scan, entropy-coded data after each SOS, and EOI as the
 * last two bytes of the input.
 */
function isJpeg(b: Buffer): boolean {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return false
  let i = 2
  let sawFrame = false
  let sawScan = false
  while (i < b.length) {
    if (b[i] !== 0xff) return false
    while (i < b.length && b[i] === 0xff) i++ // fill bytes (B.1.1.2)
    if (i >= b.length) return false
    const marker = b[i]
    i++
    if (marker === 0xd9) return sawFrame && sawScan && i === b.length
    if (marker === 0x00 || marker === 0xd8) return false
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue // no length field
    if (i + 2 > b.length) return false
    const length = b.readUInt16BE(i)
    if (length < 2 || i + length > b.length) return false
    if (isFrameMarker(marker)) sawFrame = true
    i += length
    if (marker === 0xda) {
      if (!sawFrame) return false
      sawScan = true
      i = skipEntropyCodedData(b, i)
    }
  }
  return false
}

/** SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC). */
function isFrameMarker(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
}

/** Skips scan data up to the next marker: 0xFF00 is a stuffed byte, 0xFFD0..D7 a restart. */
function skipEntropyCodedData(b: Buffer, start: number): number {
  let i = start
  while (i < b.length) {
    if (b[i] === 0xff && i + 1 < b.length) {
      const next = b[i + 1]
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
        i += 2
        continue
      }
      return i
    }
    i++
  }
  return i
}

/**
 * WebP (RFC 9649): a RIFF container whose size field covers exactly the input, form type
 * WEBP, chunks that tile the rest (odd sizes padded), the first chunk VP8, VP8L or VP8X
 * with its signature, and image data present.
 */
function isWebp(b: Buffer): boolean {
  if (b.length < 20) return false
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') {
    return false
  }
  if (b.readUInt32LE(4) + 8 !== b.length) return false
  let i = 12
  let first: string | undefined
  let sawImage = false
  while (i < b.length) {
    if (i + 8 > b.length) return false
    const fourcc = b.toString('latin1', i, i + 4)
    if (!/^[\x20-\x7e]{4}$/.test(fourcc)) return false
    const size = b.readUInt32LE(i + 4)
    const end = i + 8 + size + (size & 1)
    if (end > b.length) return false
    const data = b.subarray(i + 8, i + 8 + size)
    if (first === undefined) {
      first = fourcc
      if (fourcc === 'VP8 ') {
        // Frame tag (3 bytes), then the key-frame start code 9D 01 2A (RFC 6386 §9.1).
        if (size < 10 || data[3] !== 0x9d || data[4] !== 0x01 || data[5] !== 0x2a) return false
      } else if (fourcc === 'VP8L') {
        if (size < 5 || data[0] !== 0x2f) return false
      } else if (fourcc !== 'VP8X' || size !== 10) {
        return false
      }
    }
    if (fourcc === 'VP8 ' || fourcc === 'VP8L' || fourcc === 'ANMF') sawImage = true
    i = end
  }
  return sawImage
}

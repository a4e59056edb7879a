package media

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
)

// What decoding and re-encoding an image holds in memory at its peak, told
// from its header before it is decoded, so that an instance admits no more
// uploads at once than its memory budget holds (Service.process). Each
// term is an upper bound of what the standard decoders, the orientation,
// the thumbnail's scaler and the encoder's buffer allocate; a test holds
// Footprint above what Process allocates for the worst cases.

// maxOutput is the most bytes a re-encoded picture may take: beyond it the
// upload is refused (an image whose pixels do not compress, sent small).
// Its buffer grows by doubling, so it holds at most twice that.
const maxOutput = 3 * MaxBytes

// thumbTmp is the bytes a pixel of the thumbnail scaler's intermediate
// image takes (golang.org/x/image/draw's kernel: four float64s).
const thumbTmp = 32

// Footprint returns the bytes Process will hold at its peak for data,
// whose header h is; without the upload's own bytes, which the caller
// holds already.
func (h Header) Footprint(data []byte) int64 {
	w, ht := int64(h.Config.Width), int64(h.Config.Height)
	px := w * ht
	decoded := px * bytesPerPixel(h.Config.ColorModel)
	switch h.Kind {
	case JPEG:
		if n, progressive := jpegFrame(data); progressive {
			// A progressive JPEG keeps every coefficient until its last
			// scan: an int32 for each pixel of each component (at most:
			// subsampled chroma has fewer).
			decoded += px * 4 * int64(n)
		}
	case PNG:
		if pngInterlaced(data) {
			decoded += decoded / 2 // the whole image, and its largest pass's
		}
	}
	upright := int64(0)
	if h.Orientation > 1 {
		upright = px * 4 // at most an RGBA copy (a YCbCr one is smaller)
	}
	tw, th := thumbSize(h.Config.Width, h.Config.Height)
	thumb := int64(tw) * int64(th) * 4
	if tw < h.Config.Width || th < h.Config.Height {
		thumb += int64(tw) * ht * thumbTmp // the scaler's intermediate image
	}
	const slack = 4 << 20 // the decoders' and encoders' own tables and rows
	return decoded + upright + thumb + 2*maxOutput + slack
}

// MaxFootprint is the largest Footprint of any image Process accepts: a
// 4096 × 4096 16-bit PNG, interlaced. An instance's memory budget for
// uploads must hold at least this much.
var MaxFootprint = Header{Kind: PNG, Config: image.Config{ColorModel: color.NRGBA64Model, Width: 4096, Height: 4096}}.Footprint(interlacedIHDR)

// interlacedIHDR is the start of an interlaced PNG, for MaxFootprint.
var interlacedIHDR = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x10\x00\x00\x00\x10\x00\x10\x06\x00\x00\x01")

// bytesPerPixel is what the standard decoders allocate for a pixel of an
// image of model m: the most for a model that does not tell (YCbCr's
// chroma may or may not be subsampled).
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4 // RGBA, NRGBA, CMYK, NYCbCrA and the rest
}

// jpegFrame reads a JPEG's frame header: how many components it has, and
// whether it is progressive. 3 and true when it cannot be found (the
// worst, for a bound).
func jpegFrame(b []byte) (components int, progressive bool) {
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			return 3, true
		}
		marker := b[i+1]
		if marker == 0xFF { // fill
			i++
			continue
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		switch marker {
		case 0xC0, 0xC1, 0xC2:
			if i+10 > len(b) {
				return 3, true
			}
			return int(b[i+9]), marker == 0xC2
		case 0xDA: // the scan begins: no frame header came first
			return 3, true
		}
		i += 2 + n
	}
	return 3, true
}

// pngInterlaced reports whether a PNG is Adam7-interlaced: its IHDR's
// last byte.
func pngInterlaced(b []byte) bool {
	const ihdr = 8 + 8 // signature, then the chunk's length and type
	return len(b) > ihdr+12 && bytes.Equal(b[12:16], []byte("IHDR")) && b[ihdr+12] != 0
}

// thumbSize is the thumbnail's size for an image w × h: within ThumbSide
// × ThumbSide, never larger than the image.
func thumbSize(w, h int) (int, int) {
	if w <= ThumbSide && h <= ThumbSide {
		return w, h
	}
	if w >= h {
		return ThumbSide, max(1, h*ThumbSide/w)
	}
	return max(1, w*ThumbSide/h), ThumbSide
}

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
	d := h.decoded(data)
	held, decoding, upright, planes := d.held, d.decoding, d.upright, d.planes
	// Steps, one after the other, each one's garbage collected as it ends
	// (remade): the decoding; turning the image upright; scaling it to
	// what is kept; then its thumbnail, its encoding and the thumbnail's
	// in WebP. The encoded picture is held through them all.
	uw, uh := turned(h.Config.Width, h.Config.Height, h.Orientation)
	pixels := held
	turning := int64(0)
	if upright > 0 {
		turning, pixels = held+upright, upright
	}
	keeping := int64(0)
	kw, kh := keptSize(uw, uh)
	if kw != uw || kh != uh {
		// Planes scaled as planes (at most 3 bytes a pixel), anything else
		// to an RGBA; from its blocks' averages first when it is two or
		// more times as large (kept), the image held meanwhile.
		bpp := int64(4)
		if planes {
			bpp = 3
		}
		shrunk := int64(0)
		if k := keptShrink(uw, uh); k >= 2 {
			shrunk = int64(uw/k) * int64(uh/k) * bpp
		}
		kept := int64(kw) * int64(kh) * bpp
		keeping, pixels = pixels+shrunk+kept, kept
	}
	tw, th := thumbSize(kw, kh)
	rest := pixels + thumbFootprint(kw, kh, planes) + int64(tw)*int64(th)*4 + webpFootprint(tw, th)
	return max(decoding, turning, keeping, rest) + 2*maxOutput + footprintSlack
}

// decodeBound is what decoding an image and turning it upright hold: what
// the decoder holds at its peak (decoding) and what it leaves, the image
// (held: a progressive JPEG's coefficients, or the planes of one
// converted to RGBA at the end, are garbage once it returns); the
// upright copy; and whether it is a JPEG's YCbCr planes, at a
// subsampling they are turned, scaled and shrunk at (orientYCbCr,
// scaleYCbCr, shrinkYCbCr; anything else is turned and scaled as RGBA).
type decodeBound struct {
	held, decoding, upright int64
	planes                  bool
}

func (h Header) decoded(data []byte) decodeBound {
	px := int64(h.Config.Width) * int64(h.Config.Height)
	var d decodeBound
	d.held = px * bytesPerPixel(h.Config.ColorModel)
	d.decoding = d.held
	if h.Orientation > 1 {
		d.upright = px * 4 // at most an RGBA copy
	}
	switch h.Kind {
	case JPEG:
		h.jpegDecoded(data, px, &d)
	case PNG:
		if pngInterlaced(data) {
			d.decoding += d.held / 2 // the whole image, and its largest pass's
		}
	}
	return d
}

// jpegDecoded is decoded's bound of a JPEG of px pixels, by its frame.
func (h Header) jpegDecoded(data []byte, px int64, d *decodeBound) {
	f, ok := jpegFrame(data)
	if !ok {
		d.held = px * 4
		d.decoding = px * 4 * 4 // the worst: progressive, three full planes, converted
		return
	}
	samples := f.samples(h.Config.Width, h.Config.Height)
	d.held, d.decoding = samples, samples
	if f.components == 4 || f.rgb {
		d.held = px * 4 // CMYK or RGBA, converted from the planes at the end
		d.decoding += d.held
	}
	if f.progressive {
		// A progressive JPEG keeps every coefficient until its last scan:
		// an int32 for each sample of each component.
		d.decoding += samples * 4
	}
	if f.components == 3 && !f.rgb && f.turnable() {
		d.planes = true
		if h.Orientation > 1 {
			d.upright = samples
		}
	}
}

// webpFootprint bounds what encoding a w × h thumbnail in WebP holds at
// its peak: the WebAssembly module's memory, which holds the pixels,
// libwebp's planes and its output, and the copies of it left as it grows
// (measured with noise's pixels: 3.3 MiB for 100 × 75, 14 MiB for 400 ×
// 300, 21 MiB for 400 × 400), and an unpremultiplied copy of a
// transparent one.
func webpFootprint(w, h int) int64 {
	return 4<<20 + int64(w)*int64(h)*(150+4)
}

// webpCompile bounds what compiling the WebP encoder allocates, once an
// instance, before its first thumbnail (measured: 37 MiB, most of it
// garbage at once). The first picture an instance makes safe counts it.
const webpCompile = 48 << 20

// footprintSlack is the decoders' and encoders' own tables and rows.
const footprintSlack = 4 << 20

// thumbFootprint is what the thumbnail of an upright w × h image holds:
// the thumbnail, and the scaler's intermediate image, which is as tall as
// its source (a JPEG's planes shrunk first, when they are, and the 4:4:4
// image that shrinking makes).
func thumbFootprint(w, h int, planes bool) int64 {
	tw, th := thumbSize(w, h)
	out := int64(tw) * int64(th) * 4
	if tw == w && th == h {
		return out
	}
	if k := min(w/(2*tw), h/(2*th)); planes && k >= 2 {
		w, h = w/k, h/k
		out += int64(w) * int64(h) * 3
	}
	return out + int64(tw)*int64(h)*thumbTmp
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

// frame is what a JPEG's frame header says of its components.
type frame struct {
	components  int
	progressive bool
	// rgb says its three components may be red, green and blue, which the
	// decoder converts to RGBA: their ids say so, or an Adobe segment.
	rgb bool
	// h and v are each component's sampling factors (at most 4 of them).
	h, v [4]int
}

// samples is how many samples the standard decoder keeps for a w × h
// image of frame f: each component's plane, padded to whole MCUs.
func (f frame) samples(w, h int) int64 {
	hmax, vmax := 1, 1
	for i := range f.components {
		hmax, vmax = max(hmax, f.h[i]), max(vmax, f.v[i])
	}
	mcus := int64((w+8*hmax-1)/(8*hmax)) * int64((h+8*vmax-1)/(8*vmax))
	var n int64
	for i := range f.components {
		n += mcus * int64(f.h[i]*f.v[i]) * 64
	}
	return n
}

// turnable reports whether a three-component frame's chroma is one that
// orientYCbCr turns plane by plane (4:4:4, 4:2:2, 4:2:0, 4:4:0).
func (f frame) turnable() bool {
	if f.h[1] != f.h[2] || f.v[1] != f.v[2] || f.h[1] != 1 || f.v[1] != 1 {
		return false
	}
	return f.h[0] <= 2 && f.v[0] <= 2
}

// jpegFrame reads a JPEG's frame header: its components, their sampling,
// and whether it is progressive; false when it cannot be read, or is one
// the bound does not know (then the worst is assumed).
func jpegFrame(b []byte) (frame, bool) {
	adobeRGB := false
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			return frame{}, false
		}
		marker := b[i+1]
		if marker == 0xFF { // fill
			i++
			continue
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 {
			return frame{}, false // a segment's length counts its own two bytes
		}
		seg := b[i+4 : min(len(b), i+2+n)]
		switch marker {
		case 0xC0, 0xC1, 0xC2:
			f, ok := sof(seg, marker == 0xC2)
			f.rgb = ok && f.components == 3 && (adobeRGB || string([]byte{seg[6], seg[9], seg[12]}) == "RGB")
			return f, ok
		case 0xEE: // Adobe's: a transform of 0 is RGB (or CMYK)
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" && seg[11] == 0 {
				adobeRGB = true
			}
		case 0xDA: // the scan begins: no frame header came first
			return frame{}, false
		}
		i += 2 + n
	}
	return frame{}, false
}

// sof reads a frame header's segment (after its length): precision,
// height, width, then each component's id, sampling factors and table.
func sof(seg []byte, progressive bool) (frame, bool) {
	if len(seg) < 6 {
		return frame{}, false
	}
	f := frame{components: int(seg[5]), progressive: progressive}
	if f.components != 1 && f.components != 3 && f.components != 4 || len(seg) < 6+3*f.components {
		return frame{}, false
	}
	for c := range f.components {
		s := seg[6+3*c+1]
		f.h[c], f.v[c] = int(s>>4), int(s&15)
		if f.h[c] < 1 || f.h[c] > 4 || f.v[c] < 1 || f.v[c] > 4 {
			return frame{}, false
		}
	}
	if f.components == 1 {
		f.h[0], f.v[0] = 1, 1 // one component: the decoder ignores its factors
	}
	return f, true
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

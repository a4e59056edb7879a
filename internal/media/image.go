package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"socialstream/internal/derrors"
)

// The image types an upload may be, told by their first bytes.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// Limits of an upload.
const (
	// MaxBytes is the largest upload: far below App Engine's 32 MiB
	// request limit, and what a phone's photo needs.
	MaxBytes = 8 << 20
	// MaxPixels is the most pixels an image may have (4096 × 4096): a
	// small file that would decode to more is a decompression bomb. A
	// decoded image takes 4 bytes a pixel at most, 64 MiB.
	MaxPixels = 1 << 24
	// ThumbSide is the longest side of a thumbnail.
	ThumbSide = 400
	// jpegQuality is the quality of the JPEGs the service writes.
	jpegQuality = 85
)

var (
	errNotImage  = derrors.New(derrors.InvalidArgument, "the upload is not a JPEG, PNG, GIF or WebP image")
	errCorrupt   = derrors.New(derrors.InvalidArgument, "the image cannot be read: it is damaged or truncated")
	errTooLarge  = derrors.New(derrors.TooLarge, fmt.Sprintf("an image may be at most %d MiB", MaxBytes>>20))
	errTooMany   = derrors.New(derrors.InvalidArgument, fmt.Sprintf("an image may have at most %d pixels (4096 × 4096)", MaxPixels))
	errEmptyBody = derrors.New(derrors.InvalidArgument, "the upload is empty: send the image's bytes")
)

// Sniff tells an image's type by its first bytes, whatever the client
// said it was; "" if it is none of the four.
func Sniff(b []byte) string {
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return JPEG
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a")):
		return GIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// Picture is an upload made safe to serve: re-encoded from its pixels
// alone (no metadata survives: no EXIF, no location, no comments), turned
// upright as its EXIF said, with a thumbnail.
type Picture struct {
	MimeType      string
	Data          []byte
	Width, Height int
	ThumbType     string
	Thumb         []byte
	ThumbWidth    int
	ThumbHeight   int
}

// Process checks data is an image within the limits and makes its
// Picture. The image is decoded only once its header says it is within
// MaxPixels. A GIF keeps its first frame; a WebP, which Go cannot write,
// becomes a PNG if it has transparency and a JPEG if not.
func Process(data []byte) (*Picture, error) {
	if len(data) == 0 {
		return nil, errEmptyBody
	}
	if len(data) > MaxBytes {
		return nil, errTooLarge
	}
	kind := Sniff(data)
	var (
		config func([]byte) (image.Config, error)
		decode func([]byte) (image.Image, error)
	)
	switch kind {
	case JPEG:
		config = func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }
	case PNG:
		config = func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }
	case GIF:
		config = func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) } // the first frame
	case WebP:
		config = func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return webp.Decode(bytes.NewReader(b)) }
	default:
		return nil, errNotImage
	}
	cfg, err := config(data)
	if err != nil {
		return nil, errCorrupt
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, errCorrupt
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, errTooMany
	}
	img, err := decode(data)
	if err != nil {
		return nil, errCorrupt
	}
	if kind == JPEG {
		img = orient(img, jpegOrientation(data))
	}
	out := kind
	if kind == WebP {
		out = JPEG
		if !opaque(img) {
			out = PNG
		}
	}
	p := &Picture{MimeType: out, Width: img.Bounds().Dx(), Height: img.Bounds().Dy()}
	if p.Data, err = encode(img, out); err != nil {
		return nil, err
	}
	thumb := thumbnail(img)
	p.ThumbType = JPEG
	if !opaque(thumb) {
		p.ThumbType = PNG
	}
	p.ThumbWidth, p.ThumbHeight = thumb.Bounds().Dx(), thumb.Bounds().Dy()
	if p.Thumb, err = encode(thumb, p.ThumbType); err != nil {
		return nil, err
	}
	return p, nil
}

func encode(img image.Image, kind string) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch kind {
	case JPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	case PNG:
		err = (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img)
	case GIF:
		err = gif.Encode(&buf, img, nil)
	default:
		err = fmt.Errorf("media: no encoder for %s", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("media: encode %s: %w", kind, err)
	}
	return buf.Bytes(), nil
}

// thumbnail scales img to fit ThumbSide × ThumbSide (never up), with the
// Catmull-Rom kernel of golang.org/x/image/draw, which averages every
// source pixel when it shrinks.
func thumbnail(img image.Image) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= ThumbSide && h <= ThumbSide {
		return img
	}
	if w >= h {
		w, h = ThumbSide, max(1, h*ThumbSide/w)
	} else {
		w, h = max(1, w*ThumbSide/h), ThumbSide
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h)) // RGBA: the scaler's fast paths write it
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
	return dst
}

// opaque reports whether no pixel of img is transparent.
func opaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// jpegOrientation reads the EXIF orientation (1 to 8) of a JPEG: its
// APP1 Exif segment's first image directory, tag 0x0112. 1 (upright) if
// there is none, or it cannot be read.
func jpegOrientation(b []byte) int {
	i := 2 // past the start of image
	for i+4 <= len(b) && b[i] == 0xFF {
		marker := b[i+1]
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image
			break
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			break
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var order binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 1
	}
	ifd := int(order.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > len(t) {
		return 1
	}
	count := int(order.Uint16(t[ifd:]))
	for k := 0; k < count; k++ {
		e := ifd + 2 + 12*k
		if e+12 > len(t) {
			break
		}
		if order.Uint16(t[e:]) == 0x0112 && order.Uint16(t[e+2:]) == 3 { // orientation, a SHORT
			if v := int(order.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			break
		}
	}
	return 1
}

// orient turns img upright from EXIF orientation o: the mirrorings and
// rotations of values 2 to 8.
func orient(img image.Image, o int) image.Image {
	if o <= 1 || o > 8 {
		return img
	}
	b := img.Bounds()
	src := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy())) // RGBA: draw's fast path from a JPEG's YCbCr
	draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 { // the ones that turn a quarter swap the sides
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var dx, dy int
			switch o {
			case 2:
				dx, dy = w-1-x, y
			case 3:
				dx, dy = w-1-x, h-1-y
			case 4:
				dx, dy = x, h-1-y
			case 5:
				dx, dy = y, x
			case 6:
				dx, dy = h-1-y, x
			case 7:
				dx, dy = h-1-y, w-1-x
			case 8:
				dx, dy = y, w-1-x
			}
			si, di := src.PixOffset(x, y), dst.PixOffset(dx, dy)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}

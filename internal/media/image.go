package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"runtime"

	webpenc "github.com/gen2brain/webp"
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
	// small file that would decode to more is a decompression bomb. What
	// processing one holds is its Footprint, at most MaxFootprint.
	MaxPixels = 1 << 24
	// KeptPixels is the most pixels of a picture kept and sent: one with
	// more is scaled down to it. 1920 × 1080's worth, what Mastodon kept
	// before its version 4.2: about what a phone's screen shows of a
	// photo opened, and apps, told it (image_matrix_limit), shrink a
	// photo to it before they send it. A phone's 12-megapixel photo is
	// kept at about 1662 × 1247, in about a sixth of the bytes, which is
	// what a picture opened sends (docs/performance.md, "Pictures").
	KeptPixels = 1920 * 1080
	// ThumbSide is the longest side of a thumbnail.
	ThumbSide = 400
	// jpegQuality is the quality of the JPEGs the service writes.
	jpegQuality = 85
	// webpQuality and webpMethod are libwebp's quality and effort (0 to
	// 6; 4 is its default) for a thumbnail in WebP.
	webpQuality, webpMethod = 80, 4
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
// upright as its EXIF said, with a thumbnail. The thumbnail is also in
// WebP (ThumbWebP), for the clients that accept it, when that is smaller
// (nil when it is not): timelines show thumbnails, every one many times
// over, and a WebP is about half a JPEG's bytes (docs/performance.md).
type Picture struct {
	MimeType      string
	Data          []byte
	Width, Height int
	ThumbType     string
	Thumb         []byte
	ThumbWidth    int
	ThumbHeight   int
	ThumbWebP     []byte
}

// Header is what an upload's first bytes say of it: its type, its size
// and colour model, and (a JPEG's EXIF) the orientation that turns it
// upright, 1 if none.
type Header struct {
	Kind        string
	Config      image.Config
	Orientation int
}

// ReadHeader checks data is an image within the limits, from its header
// alone, and returns the header.
func ReadHeader(data []byte) (Header, error) {
	if len(data) == 0 {
		return Header{}, errEmptyBody
	}
	if len(data) > MaxBytes {
		return Header{}, errTooLarge
	}
	h := Header{Kind: Sniff(data), Orientation: 1}
	var config func(io.Reader) (image.Config, error)
	switch h.Kind {
	case JPEG:
		config = jpeg.DecodeConfig
		if o := jpegOrientation(data); o > 1 && o <= 8 {
			h.Orientation = o
		}
	case PNG:
		config = png.DecodeConfig
	case GIF:
		config = gif.DecodeConfig
	case WebP:
		config = webp.DecodeConfig
	default:
		return Header{}, errNotImage
	}
	cfg, err := config(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return Header{}, errCorrupt
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return Header{}, errTooMany
	}
	h.Config = cfg
	return h, nil
}

// Process checks data is an image within the limits and makes its
// Picture. The image is decoded only once its header says it is within
// MaxPixels. A GIF keeps its first frame; a WebP, which Go cannot write,
// becomes a PNG if it has transparency and a JPEG if not.
func Process(data []byte) (*Picture, error) {
	h, err := ReadHeader(data)
	if err != nil {
		return nil, err
	}
	return h.process(data)
}

func (h Header) process(data []byte) (*Picture, error) {
	p, thumb, err := h.remade(data)
	if err != nil {
		return nil, err
	}
	// The WebP encoder's memory is counted with the kept image's, which
	// is garbage by now (Footprint's last step).
	if p.ThumbWebP, err = encodeWebP(thumb); err != nil {
		return nil, err
	}
	if len(p.ThumbWebP) >= len(p.Thumb) {
		p.ThumbWebP = nil // a flat drawing's PNG, say: the other is better
	}
	return p, nil
}

// remade decodes data, turns it upright, scales it down to KeptPixels
// and encodes it again, with its thumbnail (made from what is kept),
// which it returns too.
func (h Header) remade(data []byte) (*Picture, image.Image, error) {
	var decode func(io.Reader) (image.Image, error)
	switch h.Kind {
	case JPEG:
		decode = jpeg.Decode
	case PNG:
		decode = png.Decode
	case GIF:
		decode = gif.Decode // the first frame
	case WebP:
		decode = webp.Decode
	}
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, nil, errCorrupt
	}
	// Each step's garbage is collected before the next allocates: what
	// the decoder held and let go (a progressive JPEG's coefficients, five
	// times its image), the image before it was turned, the image at its
	// full size. Footprint counts the steps apart.
	runtime.GC()
	if upright := orient(img, h.Orientation); upright != img {
		img = upright
		runtime.GC()
	}
	out := h.Kind
	if h.Kind == WebP {
		out = JPEG
		if !opaque(img) {
			out = PNG
		}
	}
	if k := kept(img); k != img {
		img = k
		runtime.GC()
	}
	thumb := thumbnail(img)
	p := &Picture{MimeType: out, Width: img.Bounds().Dx(), Height: img.Bounds().Dy()}
	if p.Data, err = encode(img, out); err != nil {
		return nil, nil, err
	}
	p.ThumbType = JPEG
	if !opaque(thumb) {
		p.ThumbType = PNG
	}
	p.ThumbWidth, p.ThumbHeight = thumb.Bounds().Dx(), thumb.Bounds().Dy()
	if p.Thumb, err = encode(thumb, p.ThumbType); err != nil {
		return nil, nil, err
	}
	return p, thumb, nil
}

// encodeWebP encodes a thumbnail in lossy WebP, with its transparency:
// libwebp, compiled to WebAssembly and run in the process by wazero
// (github.com/gen2brain/webp), as Go has no WebP encoder. Its colours are
// given unpremultiplied, as libwebp takes them. (That package also
// registers a WebP decoder of its own with image.Decode, whose memory
// Footprint does not know: uploads are decoded by x/image's, named,
// never through image.Decode.)
func encodeWebP(img image.Image) ([]byte, error) {
	if !opaque(img) {
		n := image.NewNRGBA(img.Bounds())
		xdraw.Draw(n, n.Bounds(), img, img.Bounds().Min, xdraw.Src)
		img = n
	}
	var buf bytes.Buffer
	if err := webpenc.Encode(&buf, img, webpenc.Options{Quality: webpQuality, Method: webpMethod}); err != nil {
		return nil, fmt.Errorf("media: encode a WebP thumbnail: %w", err)
	}
	return buf.Bytes(), nil
}

func encode(img image.Image, kind string) ([]byte, error) {
	buf := &capped{max: maxOutput}
	var err error
	switch kind {
	case JPEG:
		err = jpeg.Encode(buf, img, &jpeg.Options{Quality: jpegQuality})
	case PNG:
		err = (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(buf, img)
	case GIF:
		err = gif.Encode(buf, img, nil)
	default:
		err = fmt.Errorf("media: no encoder for %s", kind)
	}
	if errors.Is(err, errIncompressible) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("media: encode %s: %w", kind, err)
	}
	return buf.Bytes(), nil
}

var errIncompressible = derrors.New(derrors.TooLarge, fmt.Sprintf("the image's pixels do not compress: encoded again, it would take more than %d MiB", maxOutput>>20))

// capped is a bytes.Buffer that refuses to grow past max bytes.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errIncompressible
	}
	return c.Buffer.Write(p)
}

// kept scales img down to KeptPixels, if it has more, with bilinear
// interpolation: a JPEG's planes each on their own (scaleYCbCr), anything
// else by golang.org/x/image/draw's approximate bilinear scaler into an
// RGBA. Interpolation between the four nearest pixels shows well what is
// less than twice as large; an image two or more times as wide and as
// high as what is kept (a phone's photo) is first averaged in blocks of
// k × k (shrinkYCbCr, shrinkRGBA: k the whole times it is that large),
// so that every pixel of it counts, none is skipped. (An image of
// another model, a GIF's palette or a 16-bit PNG, is scaled at once.)
func kept(img image.Image) image.Image {
	b := img.Bounds()
	w, h := keptSize(b.Dx(), b.Dy())
	if w == b.Dx() && h == b.Dy() {
		return img
	}
	k := keptShrink(b.Dx(), b.Dy())
	if y, ok := img.(*image.YCbCr); ok {
		if k >= 2 {
			y = shrinkYCbCr(y, k)
		}
		if out := scaleYCbCr(y, w, h); out != nil {
			return out
		}
	}
	if k >= 2 {
		if shrunk := shrinkRGBA(img, k); shrunk != nil {
			img = shrunk
			b = img.Bounds()
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
	return dst
}

// keptShrink is the size of the blocks an image of w × h is averaged in
// before it is scaled to what is kept: how many whole times it is as
// wide and as high (1: none).
func keptShrink(w, h int) int {
	kw, kh := keptSize(w, h)
	return max(1, min(w/kw, h/kh))
}

// shrinkRGBA averages each k × k block of src, an RGBA or NRGBA image,
// into one pixel of an RGBA image (of colours weighed by their alpha, as
// RGBA's are), its partial blocks at the right and bottom edges left out
// as shrinkYCbCr's are; nil for an image of another model.
func shrinkRGBA(src image.Image, k int) *image.RGBA {
	var pix []byte
	var stride int
	premultiplied := false
	switch s := src.(type) {
	case *image.RGBA:
		pix, stride, premultiplied = s.Pix, s.Stride, true
	case *image.NRGBA:
		pix, stride = s.Pix, s.Stride
	default:
		return nil
	}
	b := src.Bounds()
	w, h := b.Dx()/k, b.Dy()/k
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	n := uint32(k * k)
	for oy := range h {
		for ox := range w {
			var r, g, bl, a uint32
			for y := oy * k; y < (oy+1)*k; y++ {
				row := pix[y*stride:]
				for x := ox * k; x < (ox+1)*k; x++ {
					p := row[4*x : 4*x+4 : 4*x+4]
					pa := uint32(p[3])
					if premultiplied {
						r, g, bl = r+uint32(p[0]), g+uint32(p[1]), bl+uint32(p[2])
					} else {
						r, g, bl = r+uint32(p[0])*pa/255, g+uint32(p[1])*pa/255, bl+uint32(p[2])*pa/255
					}
					a += pa
				}
			}
			i := oy*dst.Stride + 4*ox
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = uint8((r+n/2)/n), uint8((g+n/2)/n), uint8((bl+n/2)/n), uint8((a+n/2)/n)
		}
	}
	return dst
}

// scaleYCbCr scales a YCbCr image to w × h plane by plane, its chroma
// subsampling kept; nil for a subsampling it does not know (4:1:1,
// 4:1:0).
func scaleYCbCr(src *image.YCbCr, w, h int) *image.YCbCr {
	switch src.SubsampleRatio {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440:
	default:
		return nil
	}
	b := src.Bounds()
	if b.Min != (image.Point{}) {
		return nil // a sub-image: its planes do not start at its corner
	}
	dst := image.NewYCbCr(image.Rect(0, 0, w, h), src.SubsampleRatio)
	scalePlane(dst.Y, dst.YStride, w, h, src.Y, src.YStride, b.Dx(), b.Dy())
	sw, sh := chromaSize(b.Dx(), b.Dy(), src.SubsampleRatio)
	cw, ch := chromaSize(w, h, src.SubsampleRatio)
	scalePlane(dst.Cb, dst.CStride, cw, ch, src.Cb, src.CStride, sw, sh)
	scalePlane(dst.Cr, dst.CStride, cw, ch, src.Cr, src.CStride, sw, sh)
	return dst
}

// scalePlane scales a plane of sw × sh samples (a row every ss) into one
// of dw × dh (a row every ds), each sample the bilinear interpolation of
// the four nearest the source's point it stands for, in 16.16 fixed point.
func scalePlane(dst []byte, ds, dw, dh int, src []byte, ss, sw, sh int) {
	type tap struct{ i0, i1, w int }
	at := func(d, dn, sn int) tap {
		f := max(0, (2*d+1)*sn<<16/(2*dn)-1<<15) // (d + ½)·sn/dn − ½
		i := min(f>>16, sn-1)
		return tap{i, min(i+1, sn-1), f & 0xffff}
	}
	cols := make([]tap, dw)
	for x := range cols {
		cols[x] = at(x, dw, sw)
	}
	for y := range dh {
		r := at(y, dh, sh)
		top, bottom, out := src[r.i0*ss:], src[r.i1*ss:], dst[y*ds:]
		for x, c := range cols {
			t := int(top[c.i0])*(1<<16-c.w) + int(top[c.i1])*c.w
			u := int(bottom[c.i0])*(1<<16-c.w) + int(bottom[c.i1])*c.w
			out[x] = byte((t*(1<<16-r.w) + u*r.w + 1<<31) >> 32)
		}
	}
}

// keptSize is the size a w × h picture is kept at: its own within
// KeptPixels, else scaled down to within it, its shape kept.
func keptSize(w, h int) (int, int) {
	if int64(w)*int64(h) <= KeptPixels {
		return w, h
	}
	k := math.Sqrt(KeptPixels / (float64(w) * float64(h)))
	return max(1, int(float64(w)*k)), max(1, int(float64(h)*k))
}

// thumbnail scales img to fit ThumbSide × ThumbSide (never up), with the
// Catmull-Rom kernel of golang.org/x/image/draw, which averages every
// source pixel when it shrinks; a JPEG's planes are first averaged in
// blocks to no less than twice the thumbnail's size (shrinkYCbCr).
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
	if y, ok := img.(*image.YCbCr); ok {
		if k := min(b.Dx()/(2*w), b.Dy()/(2*h)); k >= 2 {
			img = shrinkYCbCr(y, k)
			b = img.Bounds()
		}
	}
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
	return dst
}

// shrinkYCbCr averages each k × k block of src (a JPEG's planes, at any
// subsampling) into one pixel of a 4:4:4 image, before the kernel's finer
// scaling: a phone photo's thumbnail then costs the kernel a k²-th of
// its pixels, and the box's average loses none of what the kernel would
// have averaged at twice the thumbnail's size. Partial blocks at the
// right and bottom edges are left out, a pixel or so of k.
func shrinkYCbCr(src *image.YCbCr, k int) *image.YCbCr {
	b := src.Bounds()
	w, h := b.Dx()/k, b.Dy()/k
	dst := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	n := uint32(k * k)
	for oy := range h {
		for ox := range w {
			var ys, cbs, crs uint32
			for y := b.Min.Y + oy*k; y < b.Min.Y+(oy+1)*k; y++ {
				for x := b.Min.X + ox*k; x < b.Min.X+(ox+1)*k; x++ {
					ys += uint32(src.Y[src.YOffset(x, y)])
					c := src.COffset(x, y)
					cbs += uint32(src.Cb[c])
					crs += uint32(src.Cr[c])
				}
			}
			i := oy*dst.YStride + ox
			dst.Y[i], dst.Cb[i], dst.Cr[i] = uint8((ys+n/2)/n), uint8((cbs+n/2)/n), uint8((crs+n/2)/n)
		}
	}
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
// rotations of values 2 to 8. A JPEG's YCbCr image is turned plane by
// plane into another (one copy of its size, chroma still subsampled);
// anything else is drawn straight into one RGBA.
func orient(img image.Image, o int) image.Image {
	if o <= 1 || o > 8 {
		return img
	}
	if y, ok := img.(*image.YCbCr); ok {
		if out := orientYCbCr(y, o); out != nil {
			return out
		}
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := turned(w, h, o)
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := upright(x, y, w, h, o)
			dst.Set(dx, dy, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return dst
}

// turned is the size of a w × h image turned by orientation o: the ones
// that turn a quarter (5 to 8) swap the sides.
func turned(w, h, o int) (int, int) {
	if o >= 5 {
		return h, w
	}
	return w, h
}

// upright is where pixel (x, y) of a w × h image goes, turned by
// orientation o.
func upright(x, y, w, h, o int) (int, int) {
	switch o {
	case 2:
		return w - 1 - x, y
	case 3:
		return w - 1 - x, h - 1 - y
	case 4:
		return x, h - 1 - y
	case 5:
		return y, x
	case 6:
		return h - 1 - y, x
	case 7:
		return h - 1 - y, w - 1 - x
	case 8:
		return y, w - 1 - x
	}
	return x, y
}

// orientYCbCr turns a YCbCr image by orientation o plane by plane, or
// returns nil when its chroma subsampling has no turned counterpart
// (4:1:1, 4:1:0).
func orientYCbCr(src *image.YCbCr, o int) *image.YCbCr {
	ratio := src.SubsampleRatio
	if o >= 5 {
		switch ratio {
		case image.YCbCrSubsampleRatio422:
			ratio = image.YCbCrSubsampleRatio440
		case image.YCbCrSubsampleRatio440:
			ratio = image.YCbCrSubsampleRatio422
		case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio420:
		default:
			return nil
		}
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := turned(w, h, o)
	dst := image.NewYCbCr(image.Rect(0, 0, dw, dh), ratio)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := upright(x, y, w, h, o)
			dst.Y[dst.YOffset(dx, dy)] = src.Y[src.YOffset(b.Min.X+x, b.Min.Y+y)]
		}
	}
	// Each chroma sample is written from the source's sample that covers
	// the same place, sample by sample of the destination.
	cw, ch := chromaSize(dw, dh, ratio)
	for cy := 0; cy < ch; cy++ {
		for cx := 0; cx < cw; cx++ {
			// A destination pixel this sample covers, back to the source.
			px, py := chromaPixel(cx, cy, ratio)
			px, py = min(px, dw-1), min(py, dh-1)
			sx, sy := source(px, py, w, h, o)
			si := src.COffset(b.Min.X+sx, b.Min.Y+sy)
			di := dst.COffset(px, py)
			dst.Cb[di], dst.Cr[di] = src.Cb[si], src.Cr[si]
		}
	}
	return dst
}

// source is the pixel of a w × h image that upright sends to (dx, dy):
// upright of the turned image by the inverse orientation (each is its own
// inverse but the two quarter turns, 6 and 8).
func source(dx, dy, w, h, o int) (int, int) {
	switch o {
	case 6:
		o = 8
	case 8:
		o = 6
	}
	dw, dh := turned(w, h, o)
	return upright(dx, dy, dw, dh, o)
}

// chromaSize is how many chroma samples a w × h image of ratio has each
// way.
func chromaSize(w, h int, ratio image.YCbCrSubsampleRatio) (int, int) {
	switch ratio {
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	}
	return w, h
}

// chromaPixel is the top-left pixel chroma sample (cx, cy) covers.
func chromaPixel(cx, cy int, ratio image.YCbCrSubsampleRatio) (int, int) {
	switch ratio {
	case image.YCbCrSubsampleRatio422:
		return 2 * cx, cy
	case image.YCbCrSubsampleRatio420:
		return 2 * cx, 2 * cy
	case image.YCbCrSubsampleRatio440:
		return cx, 2 * cy
	}
	return cx, cy
}

package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"

	"golang.org/x/image/webp"

	xdraw "golang.org/x/image/draw"
	"image/png"
	"os"
	"testing"

	"socialstream/internal/derrors"
)

// twoTone is a w × h image, red on its left half and blue on its right.
func twoTone(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{R: 255, A: 255}
			if x >= w/2 {
				c = color.NRGBA{B: 255, A: 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withExif puts an APP1 Exif segment after a JPEG's start: orientation o,
// and after the directory a location as a camera would write it.
func withExif(jpg []byte, o uint16, secret string) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("II*\x00")
	binary.Write(&tiff, binary.LittleEndian, uint32(8)) // the first directory
	binary.Write(&tiff, binary.LittleEndian, uint16(1)) // one entry
	binary.Write(&tiff, binary.LittleEndian, []uint16{0x0112, 3})
	binary.Write(&tiff, binary.LittleEndian, uint32(1))
	binary.Write(&tiff, binary.LittleEndian, []uint16{o, 0})
	binary.Write(&tiff, binary.LittleEndian, uint32(0)) // no next directory
	tiff.WriteString(secret)
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(seg)+2))
	out.Write(seg)
	out.Write(jpg[2:])
	return out.Bytes()
}

func TestSniffTellsByBytes(t *testing.T) {
	webp, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, twoTone(4, 4), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"jpeg", encodeJPEG(t, twoTone(4, 4)), JPEG},
		{"png", encodePNG(t, twoTone(4, 4)), PNG},
		{"gif", gifBuf.Bytes(), GIF},
		{"webp", webp, WebP},
		{"html", []byte("<html><script>alert(1)</script>"), ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), ""},
		{"riff but not webp", []byte("RIFF\x00\x00\x00\x00WAVEfmt "), ""},
		{"empty", nil, ""},
	} {
		if got := Sniff(c.data); got != c.want {
			t.Errorf("%s: Sniff = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestProcessStripsExifAndTurnsUpright(t *testing.T) {
	const secret = "GPS 48.8584N 2.2945E"
	src := withExif(encodeJPEG(t, twoTone(40, 20)), 6, secret) // 6: turn a quarter clockwise
	if !bytes.Contains(src, []byte(secret)) || jpegOrientation(src) != 6 {
		t.Fatal("the test's JPEG lacks its EXIF")
	}
	p, err := Process(src)
	if err != nil {
		t.Fatal(err)
	}
	if p.MimeType != JPEG || p.Width != 20 || p.Height != 40 {
		t.Fatalf("got %s %d×%d, want an upright image/jpeg 20×40", p.MimeType, p.Width, p.Height)
	}
	for _, b := range [][]byte{p.Data, p.Thumb} {
		if bytes.Contains(b, []byte("Exif")) || bytes.Contains(b, []byte(secret)) {
			t.Error("the metadata survived")
		}
	}
	img, err := jpeg.Decode(bytes.NewReader(p.Data))
	if err != nil {
		t.Fatal(err)
	}
	// Turned clockwise, the red left half is on top.
	if r, _, b, _ := img.At(10, 5).RGBA(); r < b {
		t.Errorf("the top is not red: the image was not turned upright")
	}
	if r, _, b, _ := img.At(10, 35).RGBA(); b < r {
		t.Errorf("the bottom is not blue")
	}
}

func TestProcessEachOrientation(t *testing.T) {
	src := twoTone(4, 2)
	src.SetNRGBA(0, 0, color.NRGBA{G: 255, A: 255}) // a green corner marks the top left
	for o := 1; o <= 8; o++ {
		out := orient(src, o)
		b := out.Bounds()
		if o >= 5 && (b.Dx() != 2 || b.Dy() != 4) || o < 5 && (b.Dx() != 4 || b.Dy() != 2) {
			t.Errorf("orientation %d: %v", o, b)
			continue
		}
		// Where the top-left corner goes, per the EXIF specification.
		want := map[int]image.Point{1: {0, 0}, 2: {3, 0}, 3: {3, 1}, 4: {0, 1}, 5: {0, 0}, 6: {1, 0}, 7: {1, 3}, 8: {0, 3}}[o]
		if _, g, _, _ := out.At(want.X, want.Y).RGBA(); g == 0 {
			t.Errorf("orientation %d: the top-left corner is not at %v", o, want)
		}
	}
}

func TestProcessKinds(t *testing.T) {
	webp, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	clear := image.NewNRGBA(image.Rect(0, 0, 900, 300)) // transparent
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, twoTone(30, 10), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name             string
		data             []byte
		mime, thumb      string
		w, h, thumbW, tH int
	}{
		{"png with transparency", encodePNG(t, clear), PNG, PNG, 900, 300, 400, 133},
		{"opaque png", encodePNG(t, twoTone(300, 900)), PNG, JPEG, 300, 900, 133, 400},
		{"gif", gifBuf.Bytes(), GIF, JPEG, 30, 10, 30, 10},
		{"webp", webp, JPEG, JPEG, 0, 0, 0, 0},
	} {
		p, err := Process(c.data)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if p.MimeType != c.mime || p.ThumbType != c.thumb {
			t.Errorf("%s: %s with a %s thumbnail, want %s and %s", c.name, p.MimeType, p.ThumbType, c.mime, c.thumb)
		}
		if c.w != 0 && (p.Width != c.w || p.Height != c.h || p.ThumbWidth != c.thumbW || p.ThumbHeight != c.tH) {
			t.Errorf("%s: %d×%d, thumbnail %d×%d", c.name, p.Width, p.Height, p.ThumbWidth, p.ThumbHeight)
		}
		if Sniff(p.Data) != p.MimeType || Sniff(p.Thumb) != p.ThumbType {
			t.Errorf("%s: the stored bytes are not what they are said to be", c.name)
		}
		if _, _, err := image.Decode(bytes.NewReader(p.Thumb)); err != nil {
			t.Errorf("%s: thumbnail: %v", c.name, err)
		}
	}
}

// bomb returns a PNG whose header says w × h: DecodeConfig believes it,
// and a decoder would allocate for it.
func bomb(t *testing.T, w, h uint32) []byte {
	b := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)))
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29])) // IHDR's type and data
	return b
}

func TestProcessRefuses(t *testing.T) {
	jpg := encodeJPEG(t, twoTone(20, 20))
	for _, c := range []struct {
		name string
		data []byte
		kind error
	}{
		{"empty", nil, derrors.InvalidArgument},
		{"text said to be an image", []byte("GIF89 is not how this starts"), derrors.InvalidArgument},
		{"truncated jpeg", jpg[:len(jpg)/2], derrors.InvalidArgument},
		{"decompression bomb", bomb(t, 100000, 100000), derrors.InvalidArgument},
		{"just over the pixels", bomb(t, 4097, 4096), derrors.InvalidArgument},
		{"too many bytes", append(bytes.Clone(jpg), make([]byte, MaxBytes)...), derrors.TooLarge},
	} {
		_, err := Process(c.data)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
	if _, err := Process(bomb(t, 4096, 4096)); errors.Is(err, errTooMany) {
		t.Error("4096 × 4096 is within the limit")
	}
}

// BenchmarkProcess makes a phone photo safe: a 4000 × 3000 JPEG (12
// megapixels), turned upright, encoded again, with its thumbnail.
func BenchmarkProcess(b *testing.B) {
	src := withExif(encodeJPEG(b, twoTone(4000, 3000)), 6, "")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Process(src); err != nil {
			b.Fatal(err)
		}
	}
}

// A JPEG's YCbCr image is turned upright plane by plane: every luma
// sample, and every chroma sample's top-left pixel, comes from the source
// pixel that orientation sends there, for each subsampling a turn keeps
// (a quarter turn swaps 4:2:2 and 4:4:0).
func TestOrientYCbCrPlaneByPlane(t *testing.T) {
	const w, h = 7, 5 // odd sides: the chroma planes' edges too
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440} {
		src := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
		for i := range src.Y {
			src.Y[i] = byte(i)
		}
		for i := range src.Cb {
			src.Cb[i], src.Cr[i] = byte(i), byte(200-i)
		}
		for o := 2; o <= 8; o++ {
			dst := orientYCbCr(src, o)
			if dst == nil {
				t.Fatalf("ratio %v, orientation %d: not turned", ratio, o)
			}
			dw, dh := turned(w, h, o)
			if b := dst.Bounds(); b.Dx() != dw || b.Dy() != dh {
				t.Fatalf("ratio %v, orientation %d: %v, want %d × %d", ratio, o, b, dw, dh)
			}
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					dx, dy := upright(x, y, w, h, o)
					if sx, sy := source(dx, dy, w, h, o); sx != x || sy != y {
						t.Fatalf("orientation %d: source(upright(%d, %d)) = (%d, %d)", o, x, y, sx, sy)
					}
					if got, want := dst.Y[dst.YOffset(dx, dy)], src.Y[src.YOffset(x, y)]; got != want {
						t.Fatalf("ratio %v, orientation %d: luma at (%d, %d) = %d, want %d", ratio, o, dx, dy, got, want)
					}
				}
			}
			cw, ch := chromaSize(dw, dh, dst.SubsampleRatio)
			for cy := 0; cy < ch; cy++ {
				for cx := 0; cx < cw; cx++ {
					px, py := chromaPixel(cx, cy, dst.SubsampleRatio)
					px, py = min(px, dw-1), min(py, dh-1)
					sx, sy := source(px, py, w, h, o)
					si, di := src.COffset(sx, sy), dst.COffset(px, py)
					if dst.Cb[di] != src.Cb[si] || dst.Cr[di] != src.Cr[si] {
						t.Fatalf("ratio %v, orientation %d: chroma at (%d, %d) is not the source's at (%d, %d)", ratio, o, px, py, sx, sy)
					}
				}
			}
		}
	}
	// Without subsampling, the plane-by-plane turn shows what the RGBA
	// path's turn of the same picture shows, pixel for pixel.
	src := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	for i := range src.Y {
		src.Y[i], src.Cb[i], src.Cr[i] = byte(30*i), byte(7*i), byte(255-11*i)
	}
	rgba := image.NewRGBA(src.Bounds())
	draw.Draw(rgba, rgba.Bounds(), src, image.Point{}, draw.Src)
	for o := 2; o <= 8; o++ {
		got, want := orient(src, o), orient(rgba, o)
		for y := 0; y < want.Bounds().Dy(); y++ {
			for x := 0; x < want.Bounds().Dx(); x++ {
				if g, w := color.RGBAModel.Convert(got.At(x, y)), want.At(x, y); g != w {
					t.Fatalf("orientation %d at (%d, %d): %v as YCbCr, %v as RGBA", o, x, y, g, w)
				}
			}
		}
	}
	// 4:1:1 has no turned counterpart: left to the RGBA path.
	if orientYCbCr(image.NewYCbCr(image.Rect(0, 0, 8, 4), image.YCbCrSubsampleRatio411), 6) != nil {
		t.Error("a 4:1:1 image turned a quarter as YCbCr")
	}
}

// A photo's thumbnail averaged in blocks first is the thumbnail the
// kernel alone makes, to within a few levels a sample: the same colours,
// edges where they were.
func TestThumbnailShrunkFirstMatchesTheKernel(t *testing.T) {
	src, err := jpeg.Decode(bytes.NewReader(encodeJPEG(t, twoTone(3000, 2000))))
	if err != nil {
		t.Fatal(err)
	}
	y, ok := src.(*image.YCbCr)
	if !ok {
		t.Fatalf("a JPEG decoded to %T", src)
	}
	got := thumbnail(y).(*image.RGBA)
	want := image.NewRGBA(got.Bounds())
	xdraw.CatmullRom.Scale(want, want.Bounds(), y, y.Bounds(), xdraw.Src, nil)
	if got.Bounds().Dx() != ThumbSide || got.Bounds().Dy() != ThumbSide*2/3 {
		t.Fatalf("thumbnail %v", got.Bounds())
	}
	worst := 0
	for i := range got.Pix {
		d := int(got.Pix[i]) - int(want.Pix[i])
		// The column at the edge between the halves blends them either
		// way; elsewhere the two agree closely.
		if d < 0 {
			d = -d
		}
		if px := (i % got.Stride) / 4; px < ThumbSide/2-2 || px > ThumbSide/2+2 {
			worst = max(worst, d)
		}
	}
	if worst > 6 {
		t.Errorf("a sample differs by %d from the kernel's alone, want at most 6", worst)
	}
}

// A thumbnail is made in WebP too, where that is smaller: at the
// thumbnail's size, its transparency kept (unpremultiplied), decoded by
// a decoder of another making than its encoder.
func TestProcessMakesAWebPThumbnail(t *testing.T) {
	photo := noise(1200, 900, color.YCbCrModel)
	half := image.NewNRGBA(image.Rect(0, 0, 800, 600)) // its left half see-through
	draw.Draw(half, half.Bounds(), photo, image.Point{}, draw.Src)
	for y := 0; y < 600; y++ {
		for x := 0; x < 400; x++ {
			half.SetNRGBA(x, y, color.NRGBA{R: 200, G: 40, B: 40, A: 64})
		}
	}
	for _, c := range []struct {
		name        string
		data        []byte
		w, h, alpha int // a pixel's alpha at (10, 10) of the thumbnail
	}{
		{"photo", encodeJPEG(t, photo), 400, 300, 0xff},
		{"photo with transparency", encodePNG(t, half), 400, 300, 64},
	} {
		p, err := Process(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.ThumbWebP == nil || len(p.ThumbWebP) >= len(p.Thumb) || Sniff(p.ThumbWebP) != WebP {
			t.Fatalf("%s: WebP thumbnail of %d bytes, %d in %s", c.name, len(p.ThumbWebP), len(p.Thumb), p.ThumbType)
		}
		img, err := webp.Decode(bytes.NewReader(p.ThumbWebP))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() != c.w || b.Dy() != c.h || b.Dx() != p.ThumbWidth {
			t.Errorf("%s: %v, want %d × %d", c.name, b, c.w, c.h)
		}
		got := color.NRGBAModel.Convert(img.At(10, 10)).(color.NRGBA)
		if diff := int(got.A) - c.alpha; diff < -4 || diff > 4 {
			t.Errorf("%s: alpha %d at (10, 10), want %d", c.name, got.A, c.alpha)
		}
		if c.alpha < 0xff && (got.R < 170 || got.G > 70) {
			t.Errorf("%s: %v at (10, 10), want about (200, 40, 40): premultiplied colours darken", c.name, got)
		}
	}
}

// The WebP encoder holds no more than webpFootprint at its peak, for
// every thumbnail's size, whose pixels do not compress.
func TestWebPFootprintCoversEncode(t *testing.T) {
	if _, err := encodeWebP(twoTone(8, 8)); err != nil { // compiled once: webpCompile
		t.Fatal(err)
	}
	for _, s := range [][2]int{{100, 75}, {400, 300}, {300, 400}, {400, 400}} {
		img := noise(s[0], s[1], color.NRGBAModel)
		var err error
		got := peakHeap(func() { _, err = encodeWebP(img) })
		if err != nil {
			t.Fatal(err)
		}
		if f := webpFootprint(s[0], s[1]); uint64(f) < got {
			t.Errorf("%d × %d: peak %d KiB, over the footprint's %d KiB", s[0], s[1], got>>10, f>>10)
		}
		t.Logf("%d × %d: peak %d KiB, footprint %d KiB", s[0], s[1], got>>10, webpFootprint(s[0], s[1])>>10)
	}
}

// BenchmarkWebPThumbnail encodes a thumbnail of a phone photo's shape in
// WebP, of pixels that do not compress: the most Process spends on it.
func BenchmarkWebPThumbnail(b *testing.B) {
	img := noise(400, 300, color.YCbCrModel)
	thumb := image.NewRGBA(img.Bounds())
	draw.Draw(thumb, thumb.Bounds(), img, image.Point{}, draw.Src)
	for b.Loop() {
		if _, err := encodeWebP(thumb); err != nil {
			b.Fatal(err)
		}
	}
}

// A picture of more than KeptPixels is kept scaled down to them, its
// shape and its colours kept; one of as many is kept as it is.
func TestProcessKeepsAtMostKeptPixels(t *testing.T) {
	for _, c := range []struct {
		w, h, o      int // o: EXIF orientation
		keptW, keptH int
	}{
		{4000, 3000, 1, 1662, 1247}, // its blocks of 2 × 2 averaged first
		{4000, 3000, 6, 1247, 1662}, // turned first
		{4096, 4096, 1, 1440, 1440},
		{3840, 2160, 1, 1920, 1080},
		{2400, 1600, 1, 1763, 1175}, // scaled at once
		{1920, 1080, 1, 1920, 1080},
		{1000, 800, 1, 1000, 800},
	} {
		data := withExif(encodeJPEG(t, twoTone(c.w, c.h)), uint16(c.o), "")
		p, err := Process(data)
		if err != nil {
			t.Fatalf("%d × %d: %v", c.w, c.h, err)
		}
		img, err := jpeg.Decode(bytes.NewReader(p.Data))
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		if p.Width != c.keptW || p.Height != c.keptH || b.Dx() != c.keptW || b.Dy() != c.keptH || p.Width*p.Height > KeptPixels {
			t.Errorf("%d × %d (orientation %d): kept %d × %d (%v), want %d × %d", c.w, c.h, c.o, p.Width, p.Height, b, c.keptW, c.keptH)
			continue
		}
		if c.o != 1 {
			continue
		}
		left := color.NRGBAModel.Convert(img.At(b.Dx()/4, b.Dy()/2)).(color.NRGBA)
		right := color.NRGBAModel.Convert(img.At(3*b.Dx()/4, b.Dy()/2)).(color.NRGBA)
		if left.R < 230 || left.B > 25 || right.B < 230 || right.R > 25 {
			t.Errorf("%d × %d: red %v on the left, blue %v on the right", c.w, c.h, left, right)
		}
	}
}

// A picture twice or more as large as what is kept is kept with every
// pixel of it counted: stripes a pixel wide, too fine to keep, become
// their average, grey, not stripes of another width (what interpolating
// between the four nearest of a picture 2.4 times as wide would make),
// whether it is a JPEG's planes or an image of colours, with or without
// transparency.
func TestProcessKeepsTheAverageOfFineDetail(t *testing.T) {
	const w, h = 4000, 3000
	stripes := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(255 * (x % 2))
			stripes.SetNRGBA(x, y, color.NRGBA{R: v, G: v, B: v, A: 255})
		}
	}
	translucent := image.NewNRGBA(stripes.Bounds())
	copy(translucent.Pix, stripes.Pix)
	for i := 3; i < len(translucent.Pix); i += 4 {
		translucent.Pix[i] = 128
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"JPEG", encodeJPEG(t, stripes)},
		{"PNG", encodePNG(t, stripes)},
		{"PNG with transparency", encodePNG(t, translucent)},
	} {
		p, err := Process(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		img, _, err := image.Decode(bytes.NewReader(p.Data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b := img.Bounds()
		if b.Dx()*b.Dy() > KeptPixels || b.Dx() < KeptPixels/h {
			t.Fatalf("%s: kept %v", c.name, b)
		}
		lo, hi := 255, 0
		for x := b.Min.X; x < b.Max.X; x++ {
			g := int(color.NRGBAModel.Convert(img.At(x, b.Dy()/2)).(color.NRGBA).G)
			lo, hi = min(lo, g), max(hi, g)
		}
		if lo < 100 || hi > 155 {
			t.Errorf("%s: a row of the stripes kept runs from %d to %d, want about 128 throughout", c.name, lo, hi)
		}
	}
}

// Each plane scaled is the bilinear interpolation of the source's: a
// gradient across stays that gradient, sample for sample, in every plane
// of every subsampling kept.
func TestScaleYCbCrInterpolatesEachPlane(t *testing.T) {
	const w, h, dw, dh = 101, 61, 70, 42
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440} {
		src := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
		value := func(i, n int) byte { return byte(i * 255 / (n - 1)) }
		fill := func(p []byte, stride, pw, ph int, across bool) {
			for y := range ph {
				for x := range pw {
					if across {
						p[y*stride+x] = value(x, pw)
					} else {
						p[y*stride+x] = value(y, ph)
					}
				}
			}
		}
		cw, ch := chromaSize(w, h, ratio)
		fill(src.Y, src.YStride, w, h, true)
		fill(src.Cb, src.CStride, cw, ch, false)
		fill(src.Cr, src.CStride, cw, ch, true)
		dst := scaleYCbCr(src, dw, dh)
		if dst == nil || dst.Bounds() != image.Rect(0, 0, dw, dh) || dst.SubsampleRatio != ratio {
			t.Fatalf("%v: %v", ratio, dst)
		}
		dcw, dch := chromaSize(dw, dh, ratio)
		check := func(name string, p []byte, stride, pw, ph, sw, sh int, across bool) {
			for y := range ph {
				for x := range pw {
					d, dn, sn := x, pw, sw
					if !across {
						d, dn, sn = y, ph, sh
					}
					at := max(0, (float64(d)+0.5)*float64(sn)/float64(dn)-0.5) // the source's point
					i := min(int(at), sn-1)
					f := at - float64(i)
					want := float64(value(i, sn))*(1-f) + float64(value(min(i+1, sn-1), sn))*f
					if got := float64(p[y*stride+x]); got < want-0.51 || got > want+0.51 {
						t.Fatalf("%v %s (%d, %d): %v, want %.2f", ratio, name, x, y, got, want)
					}
				}
			}
		}
		check("Y", dst.Y, dst.YStride, dw, dh, w, h, true)
		check("Cb", dst.Cb, dst.CStride, dcw, dch, cw, ch, false)
		check("Cr", dst.Cr, dst.CStride, dcw, dch, cw, ch, true)
	}
}

// A sub-image's blocks are its own: shrinkRGBA and shrinkYCbCr average
// the pixels within its bounds, whose corner is not (0, 0), and none of
// the image it is cut from. (A sub-image's Pix starts at its corner; a
// YCbCr's offsets take its bounds' coordinates.)
func TestShrinkReadsFromASubImagesCorner(t *testing.T) {
	full := image.Rect(0, 0, 8, 4)
	white := image.Rect(4, 0, 8, 4) // the right half
	rgba, nrgba := image.NewRGBA(full), image.NewNRGBA(full)
	ycc := image.NewYCbCr(full, image.YCbCrSubsampleRatio444)
	for y := range 4 {
		for x := range 8 {
			v := uint8(0)
			if (image.Point{x, y}).In(white) {
				v = 255
			}
			rgba.Set(x, y, color.RGBA{v, v, v, 255})
			nrgba.Set(x, y, color.NRGBA{v, v, v, 255})
			ycc.Y[ycc.YOffset(x, y)], ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = v, 128, 128
		}
	}
	for name, sub := range map[string]image.Image{
		"RGBA":  rgba.SubImage(white),
		"NRGBA": nrgba.SubImage(white),
	} {
		got := shrinkRGBA(sub, 2)
		if got.Bounds().Dx() != 2 || got.Bounds().Dy() != 2 {
			t.Fatalf("%s: %v, want 2 × 2", name, got.Bounds())
		}
		for i, p := range got.Pix {
			if p != 255 {
				t.Errorf("%s: byte %d is %d, want the white half's 255", name, i, p)
			}
		}
	}
	got := shrinkYCbCr(ycc.SubImage(white).(*image.YCbCr), 2)
	for i, y := range got.Y {
		if y != 255 {
			t.Errorf("YCbCr: luma %d is %d, want 255", i, y)
		}
	}
}

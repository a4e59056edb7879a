// Command picturesizes measures what the service stores and sends of
// photographs: each file named, scaled to 12 megapixels at most (a
// phone's photo) and written as a phone writes it (JPEG, quality 95), is
// made safe as an upload is (media.Process), and its picture's bytes,
// its thumbnail's and its thumbnail's in WebP are printed, with their
// means. The cost model's picture sizes come from it
// (docs/performance.md, "Pictures"). With -kept, each is first scaled to
// that many pixels at most, as if the service kept pictures at that size
// (media.KeptPixels): what a picture kept smaller would take.
//
//	go run ./cmd/picturesizes [-kept pixels] photo.jpg ...
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png"
	"io"
	"math"
	"os"

	xdraw "golang.org/x/image/draw"

	"socialstream/internal/media"
)

// phonePixels is the most pixels of a photo as a phone sends it.
const phonePixels = 12_000_000

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: picturesizes [-kept pixels] photo.jpg|photo.png ...")
		flag.PrintDefaults()
	}
	kept := flag.Int("kept", media.KeptPixels, "the most pixels a picture is kept at, at most media.KeptPixels")
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *kept <= 0 || *kept > media.KeptPixels {
		fmt.Fprintf(os.Stderr, "picturesizes: -kept must be 1 to %d\n", media.KeptPixels)
		os.Exit(2)
	}
	if err := run(os.Stdout, *kept, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "picturesizes:", err)
		os.Exit(1)
	}
}

// sizes are what one photo takes, made safe.
type sizes struct {
	pixels                  int
	image, thumb, thumbWebP int
}

func run(w io.Writer, kept int, files []string) error {
	var all []sizes
	fmt.Fprintln(w, "| photo | megapixels | picture, bytes | bytes a megapixel | thumbnail | thumbnail in WebP |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, name := range files {
		s, err := measure(name, kept)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, s)
		fmt.Fprintf(w, "| %s | %.1f | %d | %.0f | %d | %d |\n", name, float64(s.pixels)/1e6, s.image, s.perMegapixel(), s.thumb, s.thumbWebP)
	}
	var mean sizes
	var perMegapixel float64
	for _, s := range all {
		mean.pixels += s.pixels
		mean.image += s.image
		mean.thumb += s.thumb
		mean.thumbWebP += s.thumbWebP
		perMegapixel += s.perMegapixel()
	}
	n := len(all)
	fmt.Fprintf(w, "| mean of %d | %.1f | %d | %.0f | %d | %d |\n", n, float64(mean.pixels)/1e6/float64(n), mean.image/n,
		perMegapixel/float64(n), mean.thumb/n, mean.thumbWebP/n)
	return nil
}

// perMegapixel is the picture's bytes a megapixel.
func (s sizes) perMegapixel() float64 { return float64(s.image) / (float64(s.pixels) / 1e6) }

// measure makes one photo safe as a phone would send it, scaled to kept
// pixels at most first.
func measure(name string, kept int) (sizes, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return sizes{}, err
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return sizes{}, err
	}
	var sent bytes.Buffer
	if err := jpeg.Encode(&sent, fit(fit(img, phonePixels), kept), &jpeg.Options{Quality: 95}); err != nil {
		return sizes{}, err
	}
	p, err := media.Process(sent.Bytes())
	if err != nil {
		return sizes{}, err
	}
	if p.ThumbWebP == nil {
		return sizes{}, errors.New("no thumbnail in WebP: it would not be smaller")
	}
	return sizes{pixels: p.Width * p.Height, image: len(p.Data), thumb: len(p.Thumb), thumbWebP: len(p.ThumbWebP)}, nil
}

// fit scales img to most pixels at most.
func fit(img image.Image, most int) image.Image {
	b := img.Bounds()
	px := b.Dx() * b.Dy()
	if px <= most {
		return img
	}
	k := math.Sqrt(float64(most) / float64(px))
	dst := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*k), int(float64(b.Dy())*k)))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
	return dst
}

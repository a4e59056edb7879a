package main

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"socialstream/internal/media"
)

// bytesOf is a table row's picture's bytes.
func bytesOf(t *testing.T, row string) int {
	t.Helper()
	cells := strings.Split(row, "|")
	n, err := strconv.Atoi(strings.TrimSpace(cells[3]))
	if err != nil {
		t.Fatalf("row %q: %v", row, err)
	}
	return n
}

// A photo larger than a phone's is measured as a phone would send it:
// kept at 1920 × 1080's worth, its thumbnails counted; the mean is over
// the photos.
func TestMeasuresAsAPhoneSends(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var files []string
	for i, size := range [][2]int{{4800, 3000}, {800, 600}} {
		img := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
		for y := range size[1] {
			for x := range size[0] {
				v := uint8(x*255/size[0]) ^ uint8(rng.IntN(16))
				img.SetRGBA(x, y, color.RGBA{v, uint8(y * 255 / size[1]), 128, 255})
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, []string{"big.jpg", "small.jpg"}[i])
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	var out strings.Builder
	if err := run(&out, media.KeptPixels, files); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[2], "big.jpg | 2.1 |") || !strings.Contains(lines[3], "small.jpg | 0.5 |") ||
		!strings.HasPrefix(lines[4], "| mean of 2 | 1.3 |") {
		t.Errorf("the table:\n%s", out.String())
	}
	// Kept at 1280 × 720's worth: the large one at that size, in fewer
	// bytes; the small one as it was.
	var smaller strings.Builder
	if err := run(&smaller, 1280*720, files); err != nil {
		t.Fatal(err)
	}
	small := strings.Split(strings.TrimSpace(smaller.String()), "\n")
	if len(small) != 5 || !strings.Contains(small[2], "big.jpg | 0.9 |") || small[3] != lines[3] || bytesOf(t, small[2]) >= bytesOf(t, lines[2]) {
		t.Errorf("kept at 1280 × 720's worth:\n%s\nat 1920 × 1080's:\n%s", smaller.String(), out.String())
	}
	if err := run(&out, media.KeptPixels, []string{filepath.Join(dir, "none.jpg")}); err == nil {
		t.Error("a missing photo measured")
	}
}

package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// noise is a w × h image of model m whose pixels do not compress: the
// worst an encoder's output and a decoder's work can be.
func noise(w, h int, m color.Model) image.Image {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	r := image.Rect(0, 0, w, h)
	switch m {
	case color.NRGBA64Model:
		img := image.NewNRGBA64(r)
		for i := range img.Pix {
			img.Pix[i] = byte(rng.Uint32())
		}
		return img
	case color.YCbCrModel:
		img := image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
		for _, p := range [][]byte{img.Y, img.Cb, img.Cr} {
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
		}
		return img
	}
	img := image.NewNRGBA(r)
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	return img
}

// worst are the uploads that hold the most memory, each at its largest.
func worst(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var buf bytes.Buffer
	// A 16-bit PNG as a 4096 × 4096 photo would be: smooth, so it fits
	// MaxBytes (noise would not), and decodes at 8 bytes a pixel.
	smooth := image.NewNRGBA64(image.Rect(0, 0, 4096, 4096))
	for y := 0; y < 4096; y++ {
		for x := 0; x < 4096; x++ {
			smooth.SetNRGBA64(x, y, color.NRGBA64{uint16(x * 16), uint16(y * 16), uint16((x + y) * 8), 0xffff})
		}
	}
	if err := png.Encode(&buf, smooth); err != nil {
		t.Fatal(err)
	}
	out["16-bit PNG, 4096 × 4096"] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := png.Encode(&buf, noise(1400, 1400, color.NRGBAModel)); err != nil {
		t.Fatal(err)
	}
	out["8-bit PNG of noise, 1400 × 1400 (8 MB)"] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := jpeg.Encode(&buf, twoTone(4096, 4096), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	out["JPEG, 4096 × 4096, orientation 6"] = withExif(bytes.Clone(buf.Bytes()), 6, "")
	prog, err := os.ReadFile("testdata/gradient-4096.progressive.jpg")
	if err != nil {
		t.Fatal(err)
	}
	out["progressive JPEG, 4096 × 4096, orientation 6"] = withExif(prog, 6, "")
	rgb, err := os.ReadFile("testdata/gradient-2048.rgb.jpg")
	if err != nil {
		t.Fatal(err)
	}
	out["RGB JPEG, 2048 × 2048, orientation 3"] = withExif(rgb, 3, "")
	webp, err := os.ReadFile("testdata/gradient-4096.lossless.webp")
	if err != nil {
		t.Fatal(err)
	}
	out["lossless WebP with alpha, 4096 × 4096"] = webp
	return out
}

// peakHeap returns the most heap f holds at once, over what was held
// before: sampled every 100 µs with the collector running often (GOGC
// 10), so what is garbage goes almost as soon as it is. Garbage the
// collector has yet to take is the instance's memory limit's to bound
// (GOMEMLIMIT, in app.yaml), not the uploads' budget.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	f()
	if h := read(); h > peak.Load() {
		peak.Store(h)
	}
	close(done)
	wg.Wait()
	return peak.Load() - min(base, peak.Load())
}

// Footprint, told from the header, covers the most heap Process holds for
// the worst uploads, and the largest is MaxFootprint.
func TestFootprintCoversProcess(t *testing.T) {
	for name, data := range worst(t) {
		h, err := ReadHeader(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var perr error
		got := peakHeap(func() { _, perr = h.process(data) })
		if perr != nil {
			t.Fatalf("%s: %v", name, perr)
		}
		if f := h.Footprint(data); uint64(f) < got || f > MaxFootprint {
			t.Errorf("%s: footprint %d MiB, allocated %d MiB; want between that and MaxFootprint (%d MiB)", name, f>>20, got>>20, MaxFootprint>>20)
		}
		t.Logf("%s: peak heap %d MiB, footprint %d MiB", name, got>>20, h.Footprint(data)>>20)
	}
}

// BenchmarkWorstUploads processes the worst uploads, one at a time and
// four at once through one instance's admission, at the default budget
// (F2's) and the least (F1's, app.yaml's), which refuses the largest:
// the peak heap is what docs/performance.md states.
func BenchmarkWorstUploads(b *testing.B) {
	for name, data := range worst(b) {
		h, err := ReadHeader(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, budget := range []int64{DefaultMemory, MinMemory} {
			if h.Footprint(data) > budget {
				continue // refused at once (TestMinMemoryTakesAPhonePhoto)
			}
			for _, n := range []int{1, 4} {
				b.Run(fmt.Sprintf("%s/%d MiB/%d at once", name, budget>>20, n), func(b *testing.B) {
					a := newAdmission(budget, time.Minute)
					var peak uint64
					for b.Loop() {
						peak = max(peak, peakHeap(func() {
							var wg sync.WaitGroup
							for range n {
								wg.Go(func() {
									if _, err := a.process(context.Background(), data); err != nil {
										b.Error(err)
									}
								})
							}
							wg.Wait()
						}))
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
					b.ReportMetric(float64(h.Footprint(data))/(1<<20), "footprint-MiB")
				})
			}
		}
	}
}

// An upload waits for its memory, and past the wait is refused as busy
// (a 503): the instance never holds more than its budget.
func TestAdmissionWaitsThenRefuses(t *testing.T) {
	data := encodePNG(t, twoTone(64, 64))
	h, err := ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	need := h.Footprint(data)
	a := newAdmission(need, 50*time.Millisecond)
	if err := a.memory.Acquire(context.Background(), 1); err != nil { // another upload holds a byte
		t.Fatal(err)
	}
	if _, err := a.process(context.Background(), data); !errors.Is(err, errBusy) {
		t.Fatalf("an upload that does not fit: %v, want errBusy", err)
	}
	done := make(chan error, 1)
	go func() {
		a.wait = time.Minute
		_, err := a.process(context.Background(), data)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	a.memory.Release(1) // the other upload ends: this one fits
	if err := <-done; err != nil {
		t.Errorf("the upload once the memory is free: %v", err)
	}
}

// An instance's first upload also counts what compiling the WebP
// encoder takes (webpCompile), once: refused as busy while another
// upload leaves it only its own footprint, let in once that one ends (one
// that fails before its thumbnail compiles nothing); the uploads after it
// need their footprints alone. With a budget under
// footprint and compilation, the first takes the whole budget.
func TestFirstUploadCountsCompilingTheEncoder(t *testing.T) {
	ctx := context.Background()
	data := encodePNG(t, twoTone(64, 64))
	h, err := ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	need := h.Footprint(data)
	defer func(was bool) { webpCompiled.Store(was) }(webpCompiled.Load())
	webpCompiled.Store(false)
	a := newAdmission(need+webpCompile, 50*time.Millisecond)
	if err := a.memory.Acquire(ctx, webpCompile); err != nil { // another upload
		t.Fatal(err)
	}
	if _, err := a.process(ctx, data); !errors.Is(err, errBusy) {
		t.Fatalf("the first upload beside another: %v, want errBusy (it counts the compilation)", err)
	}
	if webpCompiled.Load() {
		t.Fatal("a refused upload counted the encoder compiled")
	}
	a.memory.Release(webpCompile)
	if _, err := a.process(ctx, data[:len(data)/2]); err == nil || webpCompiled.Load() {
		t.Fatalf("a first upload cut short: %v, compiled %v; want it refused, the encoder not counted compiled", err, webpCompiled.Load())
	}
	if _, err := a.process(ctx, data); err != nil || !webpCompiled.Load() {
		t.Fatalf("the first upload alone: %v, compiled %v; want it made, and the encoder counted compiled", err, webpCompiled.Load())
	}
	if err := a.memory.Acquire(ctx, webpCompile); err != nil {
		t.Fatal(err)
	}
	if _, err := a.process(ctx, data); err != nil {
		t.Errorf("an upload after the first, beside another: %v, want it let in on its footprint alone", err)
	}

	webpCompiled.Store(false)
	if _, err := newAdmission(need, 50*time.Millisecond).process(ctx, data); err != nil {
		t.Errorf("the first upload on a budget of its footprint: %v, want it let in on the whole budget", err)
	}
}

// Whatever an upload's bytes say, telling its footprint neither panics
// nor bounds it below what its header's size allows.
func FuzzFootprint(f *testing.F) {
	for _, seed := range [][]byte{
		jpegHeader(4032, 3024),
		withExif(jpegHeader(64, 48), 6, ""),
		{0xFF, 0xD8, 0xFF, 0xEE, 0x00, 0x00, 0xFF, 0xC0},         // a segment of length 0
		{0xFF, 0xD8, 0xFF, 0xEE, 0x00, 0x01, 'A', 'd', 'o', 'b'}, // of length 1
		pngHeader(64, 64, true),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHeader(data)
		if err != nil {
			return
		}
		px := int64(h.Config.Width) * int64(h.Config.Height)
		if got := h.Footprint(data); got < px || got > MaxFootprint {
			t.Errorf("footprint %d of a %d × %d %s, want between %d and %d", got, h.Config.Width, h.Config.Height, h.Kind, px, MaxFootprint)
		}
	})
}

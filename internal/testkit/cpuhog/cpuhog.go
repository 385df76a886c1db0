// Package cpuhog keeps every CPU of the machine busy for a test, so a
// test can show that a result does not depend on how loaded the machine
// is (the simulated engine's virtual clock).
package cpuhog

import (
	"runtime"
	"sync"
	"testing"
)

// Hog spins one goroutine per CPU until the test ends.
func Hog(tb testing.TB) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() { // spins until stop is closed
			x := 1
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 100_000 {
					x = x*31 + i
				}
			}
		})
	}
	tb.Cleanup(func() { close(stop); wg.Wait() })
}

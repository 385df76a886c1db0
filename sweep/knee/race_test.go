//go:build race

package knee_test

// raceDetector reports whether the tests run under the race detector.
const raceDetector = true

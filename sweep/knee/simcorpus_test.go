package knee_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
)

// The simulated-engine corpora of the search benchmark
// (testdata/knee/simcorpus/README.md): discoveries on the keys' official
// conc-lists, and on the doubling grid 1-256 a discovery of a key
// without a measured window runs.
const (
	simCorpusFile         = "../../testdata/knee/simcorpus/simcorpus.csv"
	simDoublingCorpusFile = "../../testdata/knee/simcorpus/simcorpus-doubling.csv"
)

var simCorpusHeader = []string{"key", "arm", "seed", "length", "conc", "gpus", "seconds", "total_tps", "output_tps", "intvty_p50", "excluded", "kv_usage", "cache_hit"}

// simArm is one arm of one simulated discovery: its full grid at the
// full length and, for the search's probes, the same grid at a probe's.
type simArm struct {
	key, arm    string
	seed        int
	gpus        int
	full, probe map[int]knee.Sample
}

func (a *simArm) id() string { return fmt.Sprintf("%s %s seed %d", a.key, a.arm, a.seed) }

// loadSimCorpus reads a corpus file into its arms, in file order.
func loadSimCorpus(t testing.TB, simCorpusFile string) []*simArm {
	t.Helper()
	f, err := os.Open(simCorpusFile)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	require.Equal(t, simCorpusHeader, rows[0], "%s: header", simCorpusFile)
	var arms []*simArm
	byID := map[string]*simArm{}
	num := func(line int, s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "%s:%d", simCorpusFile, line)
		return v
	}
	for i, r := range rows[1:] {
		line := i + 2
		seed, conc, gpus := int(num(line, r[2])), int(num(line, r[4])), int(num(line, r[5]))
		id := r[0] + "\x00" + r[1] + "\x00" + r[2]
		a := byID[id]
		if a == nil {
			a = &simArm{key: r[0], arm: r[1], seed: seed, gpus: gpus, full: map[int]knee.Sample{}, probe: map[int]knee.Sample{}}
			byID[id] = a
			arms = append(arms, a)
		}
		s := knee.Sample{Conc: conc, Simulated: true, Seconds: num(line, r[6]), Excluded: r[10]}
		if r[7] != "" {
			v, o := num(line, r[7]), num(line, r[8])
			s.TotalTPS, s.OutputTPS = &v, &o
		}
		if r[11] != "" {
			v := num(line, r[11])
			s.KVUsage = &v
		}
		if r[12] != "" {
			v := num(line, r[12])
			s.CacheHit = &v
		}
		switch r[3] {
		case "full":
			a.full[conc] = s
		case "probe":
			s.Probe = true
			a.probe[conc] = s
		default:
			t.Fatalf("%s:%d: length %q, want full or probe", simCorpusFile, line, r[3])
		}
	}
	return arms
}

// TestWriteSimCorpus writes a corpus file from the discoveries under
// $SIMCORPUS_FROM (gen.sh's work directory: full/KEY.sSEED and
// probe/KEY.sSEED): simcorpus.csv, or simcorpus-doubling.csv when
// $SIMCORPUS_GRID is "doubling"; without SIMCORPUS_FROM the test is
// skipped. The work directory's path in a reason reads WORKDIR.
func TestWriteSimCorpus(t *testing.T) {
	from := os.Getenv("SIMCORPUS_FROM")
	if from == "" {
		t.Skip("SIMCORPUS_FROM not set (testdata/knee/simcorpus/gen.sh sets it)")
	}
	simCorpusFile := simCorpusFile
	switch g := os.Getenv("SIMCORPUS_GRID"); g {
	case "", "official":
	case "doubling":
		simCorpusFile = simDoublingCorpusFile
	default:
		t.Fatalf("SIMCORPUS_GRID %q, want official or doubling", g)
	}
	out := [][]string{simCorpusHeader}
	for _, length := range []string{"full", "probe"} {
		dirs, err := filepath.Glob(filepath.Join(from, length, "*.s*"))
		require.NoError(t, err)
		slices.Sort(dirs)
		for _, dir := range dirs {
			key, seed, ok := strings.Cut(filepath.Base(dir), ".s")
			for ok && strings.Contains(seed, ".s") { // a key with ".s" in it
				var k2 string
				k2, seed, ok = strings.Cut(seed, ".s")
				key += ".s" + k2
			}
			require.True(t, ok, dir)
			arms, err := knee.Read(t.Context(), dir)
			require.NoError(t, err)
			for _, a := range arms {
				tp, _ := strconv.Atoi(a.Identity.Get("tp"))
				pp, _ := strconv.Atoi(a.Identity.Get("pp"))
				gpus := max(tp, 1) * max(pp, 1)
				for _, s := range a.Samples {
					tot, outTPS, intv := "", "", ""
					if s.TotalTPS != nil && s.OutputTPS != nil {
						tot, outTPS = fmt.Sprintf("%.2f", *s.TotalTPS), fmt.Sprintf("%.2f", *s.OutputTPS)
					}
					if s.Intvty.P50 != nil {
						intv = strings.TrimSpace(fmt.Sprint(*s.Intvty.P50))
					}
					out = append(out, []string{key, a.Identity.Parallelism(), seed, length, strconv.Itoa(s.Conc), strconv.Itoa(gpus),
						fmt.Sprintf("%.1f", s.Seconds), tot, outTPS, intv, strings.ReplaceAll(s.Excluded, from, "WORKDIR"), fraction(s.KVUsage), fraction(s.CacheHit)})
				}
			}
		}
	}
	f, err := os.Create(simCorpusFile)
	require.NoError(t, err)
	w := csv.NewWriter(f)
	require.NoError(t, w.WriteAll(out))
	require.NoError(t, f.Close())
	t.Logf("%d points written to %s", len(out)-1, simCorpusFile)
}

// fraction formats a 0-1 server metric for the corpus ("" when absent).
func fraction(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

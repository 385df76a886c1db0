package abgate

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/testkit/abcase"
)

// conformanceDir holds the shared A/B sample (see its README.md and
// testdata/README.md).
const conformanceDir = "../../testdata/ab"

// conformanceCase is a staged cases/<id>/case.json with what it expects.
type conformanceCase struct {
	abcase.Case
	Expect struct {
		Exit      int        `json:"exit"`
		Verdict   Decision   `json:"verdict"`
		Tolerance float64    `json:"tolerance"`
		Problems  [][]string `json:"problems"`
		Overall   *struct {
			Unweighted, Weighted struct{ A, B, Delta float64 }
		} `json:"overall"`
		CI90Reference []float64            `json:"ci90_reference"`
		CI90Other     map[string][]float64 `json:"ci90_other_methods"`
		McNemarP      *float64             `json:"mcnemar_p"`
		Categories    []struct {
			Category     string      `json:"category"`
			A            expectValue `json:"a"`
			B            expectValue `json:"b"`
			Cases        *int        `json:"cases"`
			APassBFail   *int        `json:"a_pass_b_fail"`
			AFailBPass   *int        `json:"a_fail_b_pass"`
			InfraErrorsA *int        `json:"infra_errors_a"`
			InfraErrorsB *int        `json:"infra_errors_b"`
		} `json:"categories"`
	}
}

type expectValue struct {
	Mode  string  `json:"mode"` // exact, null, match-if-number, any
	Value float64 `json:"value"`
}

// loadConformanceCase stages cases/<id> in a temporary directory
// (abcase.Stage) and decodes what it expects.
func loadConformanceCase(t *testing.T, id string) *conformanceCase {
	t.Helper()
	c, err := abcase.Stage(filepath.Join(conformanceDir, "cases"), id, t.TempDir())
	require.NoError(t, err)
	cc := &conformanceCase{Case: *c}
	require.NoError(t, json.Unmarshal(c.Expect, &cc.Expect))
	return cc
}

// optionsFromArgs reads the flags of "ab compare" from a case's args.
func optionsFromArgs(t *testing.T, args []string) Options {
	t.Helper()
	require.Equal(t, []string{"ab", "compare"}, args[:2])
	o := Options{}
	for i := 2; i < len(args); i += 2 {
		v := ""
		if i+1 < len(args) {
			v = args[i+1]
		}
		switch args[i] {
		case "--a":
			o.A = strings.Split(v, ",")
		case "--b":
			o.B = strings.Split(v, ",")
		case "--model":
			o.Model = v
		case "--categories":
			cats, err := ExpandCategories(strings.Split(v, ","))
			require.NoError(t, err)
			o.Categories = cats
		case "--since":
			ts, err := time.Parse(time.RFC3339, v)
			require.NoError(t, err)
			o.Read.Since = ts
		case "--tolerance":
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			o.Tolerance = f
		case "--format":
		case "--allow-partial":
			o.Read.AllowPartial = true
			i--
		default:
			t.Fatalf("unknown flag %q in case args", args[i])
		}
	}
	return o
}

func conformanceIDs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir, "INDEX.json"))
	require.NoError(t, err)
	var idx struct {
		Cases []struct {
			ID string `json:"id"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &idx))
	ids := make([]string, len(idx.Cases))
	for i, c := range idx.Cases {
		ids[i] = c.ID
	}
	return ids
}

// TestConformance runs every shared sample case through Compare and checks
// what its case.json expects.
func TestConformance(t *testing.T) {
	ids := conformanceIDs(t)
	require.Len(t, ids, 8)
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			cc := loadConformanceCase(t, id)
			o := optionsFromArgs(t, cc.Args)
			rep, err := Compare(t.Context(), o)
			require.NoError(t, err)
			ex := cc.Expect
			assert.Equal(t, ex.Verdict, rep.Verdict, "verdict; problems: %+v", rep.Problems)
			assert.InDelta(t, ex.Tolerance, rep.Tolerance, 1e-12)

			var gotProbs [][]string
			for _, p := range rep.Problems {
				gotProbs = append(gotProbs, []string{p.Category, string(p.Reason)})
				assert.Contains(t, []string{"a", "b"}, p.Arm)
				assert.NotEmpty(t, p.Root)
				assert.NotEmpty(t, p.Detail)
			}
			assert.ElementsMatch(t, uniquePairs(ex.Problems), uniquePairs(gotProbs), "problems (category, reason): %+v", rep.Problems)

			byName := map[string]CategoryResult{}
			for _, c := range rep.Categories {
				byName[c.Category] = c
			}
			require.Len(t, rep.Categories, len(ex.Categories), "one row per expanded category")
			for _, ec := range ex.Categories {
				got, ok := byName[ec.Category]
				require.True(t, ok, "category %s missing", ec.Category)
				checkValue(t, ec.Category+" a", ec.A, got.A)
				checkValue(t, ec.Category+" b", ec.B, got.B)
				if ec.Cases != nil {
					assert.Equal(t, *ec.Cases, got.Cases, "%s cases", ec.Category)
				}
				checkCount(t, ec.Category+" a_pass_b_fail", ec.APassBFail, got.APassBFail)
				checkCount(t, ec.Category+" a_fail_b_pass", ec.AFailBPass, got.AFailBPass)
				checkCount(t, ec.Category+" infra_errors_a", ec.InfraErrorsA, got.InfraErrorsA)
				checkCount(t, ec.Category+" infra_errors_b", ec.InfraErrorsB, got.InfraErrorsB)
			}
			if ex.Verdict == Incomplete {
				assert.Nil(t, rep.Primary.Delta, "no primary number when INCOMPLETE")
				assert.Nil(t, rep.Primary.CI90)
				return
			}
			require.NotNil(t, ex.Overall)
			for _, m := range []struct {
				name string
				want struct{ A, B, Delta float64 }
				got  Arms
			}{{"unweighted", ex.Overall.Unweighted, rep.Overall.Unweighted}, {"weighted", ex.Overall.Weighted, rep.Overall.Weighted}} {
				require.NotNil(t, m.got.A, m.name)
				assert.InDelta(t, m.want.A, *m.got.A, 0.01, "%s a", m.name)
				assert.InDelta(t, m.want.B, *m.got.B, 0.01, "%s b", m.name)
				assert.InDelta(t, m.want.Delta, *m.got.Delta, 0.01, "%s delta", m.name)
			}
			assert.Equal(t, *rep.Overall.Weighted.Delta, *rep.Primary.Delta, "primary is the weighted Δ")
			if ex.McNemarP != nil {
				require.NotNil(t, rep.Primary.McNemarP)
				assert.InEpsilon(t, *ex.McNemarP, *rep.Primary.McNemarP, 1e-9)
			}
			require.NotNil(t, rep.Primary.CI90)
			ci := *rep.Primary.CI90
			// Our seed differs from the reference's: the bounds agree within
			// the spread of the reference's own bootstrap runs.
			lo, hi := ex.CI90Reference[0], ex.CI90Reference[1]
			for _, o := range ex.CI90Other {
				lo, hi = math.Min(lo, o[0]), math.Max(hi, o[1])
			}
			width := ex.CI90Reference[1] - ex.CI90Reference[0]
			assert.InDelta(t, ex.CI90Reference[0], ci[0], 0.1*width+0.1, "CI lower bound %v vs reference %v (others %v)", ci, ex.CI90Reference, ex.CI90Other)
			assert.InDelta(t, ex.CI90Reference[1], ci[1], 0.1*width+0.1, "CI upper bound %v vs reference %v", ci, ex.CI90Reference)
			assert.LessOrEqual(t, ci[0], *rep.Primary.Delta)
			assert.GreaterOrEqual(t, ci[1], *rep.Primary.Delta)
		})
	}
}

func uniquePairs(ps [][]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		k := strings.Join(p, "/")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func checkValue(t *testing.T, what string, want expectValue, got *float64) {
	t.Helper()
	switch want.Mode {
	case "exact":
		if assert.NotNil(t, got, "%s: want %v, got null", what, want.Value) {
			assert.InDelta(t, want.Value, *got, 0.01, what)
		}
	case "null":
		assert.Nil(t, got, "%s: want null", what)
	case "match-if-number":
		if got != nil {
			assert.InDelta(t, want.Value, *got, 0.01, what)
		}
	case "any":
	default:
		t.Fatalf("%s: unknown expectation mode %q", what, want.Mode)
	}
}

func checkCount(t *testing.T, what string, want, got *int) {
	t.Helper()
	if want == nil {
		return
	}
	if assert.NotNil(t, got, "%s: want %d, got null", what, *want) {
		assert.Equal(t, *want, *got, what)
	}
}

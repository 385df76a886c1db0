package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// promFamily is one metric family of a Prometheus text exposition, named
// the way prometheus_client's parser (and so aiperf) names it: counters
// without their _total suffix, histograms without _bucket/_sum/_count.
type promFamily struct {
	Name, Type, Help string
	Samples          []promSample
}

// promSample is one series of a family at one scrape: a value for
// gauges, counters and untyped metrics, or buckets, sum and count for
// histograms.
type promSample struct {
	Labels  map[string]string // without "le"
	key     string            // canonical label string, identifies the series
	Value   float64
	Buckets map[string]float64 // le (as written) -> cumulative count
	Sum     float64
	Count   float64
}

// parsePromText parses the Prometheus text format (version 0.0.4) as
// exposed by vLLM and SGLang. It is lenient about what it does not need
// (timestamps, exemplars, _created samples) and strict about syntax.
func parsePromText(r io.Reader) (map[string]*promFamily, error) {
	fams := map[string]*promFamily{}
	types := map[string]string{} // exposed name -> type
	helps := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	series := map[string]map[string]*promSample{} // family -> key -> sample
	order := map[string][]string{}                // family -> keys in first-seen order
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(s, "#"); ok {
			parts := strings.Fields(rest)
			if len(parts) >= 3 && parts[0] == "TYPE" {
				types[parts[1]] = parts[2]
			}
			if len(parts) >= 2 && parts[0] == "HELP" {
				_, h, _ := strings.Cut(strings.TrimSpace(rest[len(" HELP"):]), " ")
				helps[parts[1]] = strings.TrimSpace(h)
			}
			continue
		}
		name, labels, value, err := parseSampleLine(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		fam, typ, part := familyOf(name, types)
		if part == "created" {
			continue
		}
		f := fams[fam]
		if f == nil {
			f = &promFamily{Name: fam, Type: typ, Help: helpFor(fam, helps)}
			fams[fam] = f
			series[fam] = map[string]*promSample{}
		}
		le := labels["le"]
		if typ == "histogram" {
			delete(labels, "le")
		}
		key := labelKey(labels)
		sm := series[fam][key]
		if sm == nil {
			sm = &promSample{Labels: labels, key: key}
			series[fam][key] = sm
			order[fam] = append(order[fam], key)
		}
		switch part {
		case "bucket":
			if sm.Buckets == nil {
				sm.Buckets = map[string]float64{}
			}
			sm.Buckets[le] = value
		case "sum":
			sm.Sum = value
		case "count":
			sm.Count = value
		default:
			sm.Value = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for name, f := range fams {
		for _, k := range order[name] {
			f.Samples = append(f.Samples, *series[name][k])
		}
	}
	return fams, nil
}

// familyOf maps an exposed sample name to its family, type and part.
func familyOf(name string, types map[string]string) (fam, typ, part string) {
	if t, ok := types[name]; ok && t != "counter" {
		return name, t, ""
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if t := types[base]; t == "histogram" || t == "summary" {
				return base, t, suf[1:]
			}
		}
	}
	if base, ok := strings.CutSuffix(name, "_created"); ok {
		if t := types[base]; t == "counter" || t == "histogram" {
			return base, t, "created"
		}
		if types[base+"_total"] == "counter" {
			return base, "counter", "created"
		}
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		if types[name] == "counter" || types[base] == "counter" {
			return base, "counter", ""
		}
	}
	if t, ok := types[name]; ok {
		return name, t, ""
	}
	return name, "unknown", ""
}

func helpFor(fam string, helps map[string]string) string {
	if h, ok := helps[fam]; ok {
		return h
	}
	return helps[fam+"_total"]
}

func labelKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// parseSampleLine splits `name{a="b",c="d"} value [timestamp]`.
func parseSampleLine(s string) (name string, labels map[string]string, value float64, err error) {
	labels = map[string]string{}
	i := strings.IndexAny(s, "{ \t")
	if i <= 0 {
		return "", nil, 0, fmt.Errorf("sample without value: %.80q", s)
	}
	name, rest := s[:i], s[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq <= 0 || len(rest) < eq+2 || rest[eq+1] != '"' {
				return "", nil, 0, fmt.Errorf("bad label set in %.80q", s)
			}
			key := strings.TrimSpace(rest[:eq])
			rest = rest[eq+2:]
			var val strings.Builder
			j := 0
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[j])
					}
					continue
				}
				val.WriteByte(rest[j])
			}
			if j >= len(rest) {
				return "", nil, 0, fmt.Errorf("unterminated label value in %.80q", s)
			}
			labels[key] = val.String()
			rest = rest[j+1:]
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, fmt.Errorf("sample without value: %.80q", s)
	}
	value, err = parsePromFloat(fields[0])
	if err != nil {
		return "", nil, 0, fmt.Errorf("bad value %q: %w", fields[0], err)
	}
	return name, labels, value, nil
}

func parsePromFloat(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

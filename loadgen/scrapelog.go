package loadgen

import (
	"maps"
	"time"
)

// scrapeTimeout bounds one scrape (aiperf's reachability timeout is 10s).
const scrapeTimeout = 10 * time.Second

// endpointLog is what was fetched from one endpoint: per series, the
// scraped points (gauges at every scrape; counters and histograms only
// when their value changed, which is all valueAt needs).
type endpointLog struct {
	fetches   int
	latencyNs int64
	updates   []int64 // scrape times whose content changed
	lastHash  uint64
	first     int64
	last      int64
	fams      map[string]*famLog
	famOrder  []string
	lastErr   error
}

// famLog is one family's series over the scrapes.
type famLog struct {
	typ, help string
	series    map[string]*seriesLog
	order     []string // series keys, first-seen order
}

type seriesLog struct {
	labels map[string]string
	pts    []point
	sorted bool
}

// add stores one successful scrape taken at ns.
func (l *endpointLog) add(ns int64, fams map[string]*promFamily) {
	if l.fams == nil {
		l.fams = map[string]*famLog{}
	}
	if l.fetches == 0 || ns < l.first {
		l.first = ns
	}
	l.last = max(l.last, ns)
	l.fetches++
	for name, f := range fams {
		fl := l.fams[name]
		if fl == nil {
			fl = &famLog{typ: f.Type, help: f.Help, series: map[string]*seriesLog{}}
			l.fams[name] = fl
			l.famOrder = append(l.famOrder, name)
		}
		for _, smp := range f.Samples {
			sl := fl.series[smp.key]
			if sl == nil {
				sl = &seriesLog{labels: smp.Labels, sorted: true}
				fl.series[smp.key] = sl
				fl.order = append(fl.order, smp.key)
			}
			sl.addPoint(fl.typ, point{ns, smp})
		}
	}
}

func (sl *seriesLog) addPoint(typ string, p point) {
	if n := len(sl.pts); n > 0 {
		last := sl.pts[n-1].s
		if typ == "counter" && last.Value == p.s.Value && p.ns > sl.pts[n-1].ns {
			return
		}
		if typ == "histogram" && last.Count == p.s.Count && last.Sum == p.s.Sum && p.ns > sl.pts[n-1].ns {
			return
		}
		if p.ns < sl.pts[n-1].ns {
			sl.sorted = false
		}
	}
	if p.s.Buckets != nil {
		p.s.Buckets = maps.Clone(p.s.Buckets) // the virtual clock's log reuses its samples
	}
	sl.pts = append(sl.pts, p)
}

// point is one scraped sample of one series.
type point struct {
	ns int64
	s  promSample
}

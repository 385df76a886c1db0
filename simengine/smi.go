package simengine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sweep/internal/simproto"
	"syscall"
	"time"
)

// DefaultNodeGPUs is the node's GPU count of the simulated GPU tools
// when simproto.EnvSMINodeGPUs does not give one.
const DefaultNodeGPUs = 8

// SMI runs the simulated nvidia-smi or amd-smi (tool) with args: the real
// tools' output for the commands InferenceX's monitor runs, per GPU of the
// node, stamped on the simulated engine's virtual clock as the load
// generator stamps aiperf's artifacts (or, with simproto.EnvSMIClockOrigin,
// on the compressed wall clock about that origin, as the load generator
// given the same origin stamps them), with the power of GET /sim/power:
//
//	nvidia-smi --query-gpu=<the recipe's query> --format=csv -l N   (and csv,noheader once)
//	amd-smi metric -p -c -t -u -w N --csv
//	amd-smi metric -E --csv      (energy counters)
//	amd-smi static --json
//
// A sampling loop prints every second of simulated time as the clock
// passes it, and on SIGTERM or SIGINT prints the seconds the clock has
// passed since before it exits (a virtual second takes no wall time, so a
// real tool's lag would be a gap here). It samples only the load that
// joins after it started (a server's earlier loads have their own
// timeline) and ends by itself when the engine stops answering for 60 s.
// It returns the exit status.
func SMI(tool string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s := &smi{tool: tool, base: strings.TrimSuffix(getenv(simproto.EnvSMIURL), "/"), out: bufio.NewWriter(stdout), nodeGPUs: DefaultNodeGPUs,
		hc: &http.Client{Timeout: 10 * time.Second}, gen0: -1}
	if g, err := strconv.Atoi(getenv(simproto.EnvSMIAfterGen)); err == nil && g >= 0 {
		s.gen0 = g
	}
	if v := getenv(simproto.EnvSMIClockOrigin); v != "" {
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ns <= 0 {
			fmt.Fprintf(stderr, "%s (simulated): %s=%q: want Unix nanoseconds\n", tool, simproto.EnvSMIClockOrigin, v)
			return 2
		}
		s.origin, s.gen0 = v, 0 // the wall clock's one generation is 1
	}
	defer s.out.Flush()
	if n, err := strconv.Atoi(getenv(simproto.EnvSMINodeGPUs)); err == nil && n > 0 {
		s.nodeGPUs = n
	}
	if err := s.parseFault(getenv(simproto.EnvSMIFault)); err != nil {
		fmt.Fprintf(stderr, "%s (simulated): %s: %v\n", tool, simproto.EnvSMIFault, err)
		return 2
	}
	if s.base == "" {
		fmt.Fprintf(stderr, "%s (simulated): %s is not set\n", tool, simproto.EnvSMIURL)
		return 2
	}
	cmd := strings.Join(args, " ")
	var err error
	switch {
	case tool == "nvidia-smi" && len(args) == 4 && strings.HasPrefix(args[0], "--query-gpu=") && args[1] == "--format=csv" && args[2] == "-l":
		err = s.loop(args[3], s.nvidiaHeader, s.nvidiaRows)
	case tool == "nvidia-smi" && len(args) == 2 && strings.HasPrefix(args[0], "--query-gpu=") && args[1] == "--format=csv,noheader":
		err = s.once(s.nvidiaRows)
	case tool == "amd-smi" && len(args) == 8 && cmd == "metric -p -c -t -u -w "+args[6]+" --csv":
		err = s.loop(args[6], s.amdHeader, s.amdRows)
	case tool == "amd-smi" && cmd == "metric -E --csv":
		err = s.energy()
	case tool == "amd-smi" && cmd == "static --json":
		var ids []string
		for g := range s.nodeGPUs {
			ids = append(ids, fmt.Sprintf(`{"gpu": %d}`, g))
		}
		fmt.Fprintf(s.out, "[%s]\n", strings.Join(ids, ", "))
	default:
		fmt.Fprintf(stderr, "%s (simulated): %q is not one of the commands InferenceX's GPU monitor runs\n", tool, cmd)
		return 2
	}
	if err != nil {
		s.out.Flush()
		fmt.Fprintf(stderr, "%s (simulated): %v\n", tool, err)
		return 1
	}
	return 0
}

type smi struct {
	tool     string
	base     string
	hc       *http.Client
	out      *bufio.Writer
	nodeGPUs int

	stallFrom, stallTo float64 // seconds after the first sample; stallTo 0: none
	missing            int     // GPU never reported; -1: none
	first              int64   // first sample's second (0: none yet)
	gen0               int     // the anchor generation before this monitor's load; -1: unknown
	origin             string  // Unix ns of the wall clock's origin; "": the virtual clock
}

func (s *smi) parseFault(f string) error {
	s.missing = -1
	switch {
	case f == "":
	case strings.HasPrefix(f, "stall="):
		a, b, ok := strings.Cut(strings.TrimPrefix(f, "stall="), ":")
		from, err1 := strconv.ParseFloat(a, 64)
		to, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || !(to > from) {
			return fmt.Errorf("%q: want stall=A:B with A < B (seconds after the first sample)", f)
		}
		s.stallFrom, s.stallTo = from, to
	case strings.HasPrefix(f, "missing-gpu="):
		n, err := strconv.Atoi(strings.TrimPrefix(f, "missing-gpu="))
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want missing-gpu=N", f)
		}
		s.missing = n
	default:
		return fmt.Errorf("%q: want stall=A:B or missing-gpu=N", f)
	}
	return nil
}

// page is one answer of GET /sim/power.
type page struct {
	gen     int
	until   float64
	gpus    int
	idle    float64
	energy  []float64
	seconds []int64
	watts   [][]float64
}

// fetch asks for the samples from second from (-1: the last only); with
// margin only those 60 simulated seconds old while the load runs: the
// engine may still be logging the latest ones (a virtual second takes no
// wall time, so the lag never shows as a gap).
func (s *smi) fetch(from int64, energy, margin bool) (*page, error) {
	q := "/sim/power?from=" + strconv.FormatInt(from, 10)
	if from < 0 {
		q = "/sim/power?last=1"
	}
	if margin {
		q += "&margin=60"
	}
	if energy {
		q += "&energy=1"
	}
	if s.origin != "" {
		q += "&origin=" + s.origin
	}
	resp, err := s.hc.Get(s.base + q)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /sim/power: %s", resp.Status)
	}
	p := &page{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for i := 0; sc.Scan(); i++ {
		f := strings.Fields(sc.Text())
		switch {
		case i == 0:
			if len(f) != 10 || f[0] != "gen" {
				return nil, fmt.Errorf("GET /sim/power: bad header %q", sc.Text())
			}
			p.gen, _ = strconv.Atoi(f[1])
			p.until, _ = strconv.ParseFloat(f[5], 64)
			p.gpus, _ = strconv.Atoi(f[7])
			p.idle, _ = strconv.ParseFloat(f[9], 64)
		case len(f) > 0 && f[0] == "energy":
			p.energy = parseFloats(f[1:])
		case len(f) > 0:
			e, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("GET /sim/power: bad line %q", sc.Text())
			}
			p.seconds = append(p.seconds, e)
			p.watts = append(p.watts, parseFloats(f[1:]))
		}
	}
	return p, sc.Err()
}

func parseFloats(ss []string) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i], _ = strconv.ParseFloat(s, 64)
	}
	return out
}

// node pads the engine's GPUs to the node's with idle ones.
func (s *smi) node(p *page, w []float64) []float64 {
	out := make([]float64, max(s.nodeGPUs, len(w)))
	for g := range out {
		if g < len(w) {
			out[g] = w[g]
		} else {
			out[g] = p.idle
		}
	}
	return out
}

// loop prints the header, then every second of the current load's
// timeline as the clock passes it, until a signal (after printing what the
// clock passed) or 60 s without an answer.
func (s *smi) loop(interval string, header func(), rows func(e int64, w []float64, p *page)) error {
	if n, err := strconv.Atoi(interval); err != nil || n != 1 {
		return fmt.Errorf("the simulated tools sample every second only (got %q)", interval)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	header()
	s.out.Flush()
	next := int64(0)
	lastOK := time.Now()
	for {
		stopping := ctx.Err() != nil
		from := next
		if s.gen0 < 0 {
			from = math.MaxInt64 // only the generation
		}
		p, err := s.fetch(from, false, !stopping)
		switch {
		case err != nil && time.Since(lastOK) > 60*time.Second:
			return errors.New("the simulated engine stopped answering")
		case err == nil:
			lastOK = time.Now()
			if s.gen0 < 0 {
				s.gen0 = p.gen // the load that runs after this start has a later one
				continue
			}
			if p.gen > s.gen0 {
				for i, e := range p.seconds {
					if e >= next {
						rows(e, s.node(p, p.watts[i]), p)
						next = e + 1
					}
				}
				s.out.Flush()
			}
		}
		if stopping {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// once prints the latest second of the timeline.
func (s *smi) once(rows func(e int64, w []float64, p *page)) error {
	p, err := s.fetch(-1, false, false)
	if err != nil {
		return err
	}
	if p.gen == 0 {
		return errors.New("no load has joined the simulated engine's clock yet")
	}
	if len(p.seconds) == 0 {
		return errors.New("no sample")
	}
	i := len(p.seconds) - 1
	rows(p.seconds[i], s.node(p, p.watts[i]), p)
	return nil
}

// skip applies the faults to sample second e.
func (s *smi) skip(e int64) bool {
	if s.first == 0 {
		s.first = e
	}
	d := float64(e - s.first)
	return s.stallTo > 0 && d >= s.stallFrom && d < s.stallTo
}

func (s *smi) nvidiaHeader() {
	fmt.Fprintln(s.out, "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]")
}

// nvidiaRows prints one second: local time as nvidia-smi writes it.
func (s *smi) nvidiaRows(e int64, w []float64, p *page) {
	if s.skip(e) {
		return
	}
	stamp := time.Unix(e, 0).Local().Format("2006/01/02 15:04:05.000")
	for g, watts := range w {
		if g == s.missing {
			continue
		}
		util := utilization(watts, p.idle)
		fmt.Fprintf(s.out, "%s, %d, %.2f W, %d, %d MHz, 3201 MHz, %d %%, %d %%\n",
			stamp, g, watts, 30+int(util/2), 345+int(util*16.35), int(util), int(util*0.6))
	}
}

func (s *smi) amdHeader() {
	fmt.Fprint(s.out, "timestamp,gpu,gfx_activity,umc_activity,socket_power,gfx_0_clk,mem_0_clk,hotspot,mem\r\n")
}

// amdRows prints one tick: integer epoch seconds, integer watts, CRLF
// rows and a blank line after the tick, as amd-smi's watch mode does.
func (s *smi) amdRows(e int64, w []float64, p *page) {
	if s.skip(e) {
		return
	}
	for g, watts := range w {
		if g == s.missing {
			continue
		}
		util := utilization(watts, p.idle)
		fmt.Fprintf(s.out, "%d,%d,%d,%d,%d,%d,1300,%d,%d\r\n", e, g, int(util), int(util*0.4), int(math.Round(watts)),
			138+int(util*19.62), 40+int(util/3), 38+int(util/4))
	}
	fmt.Fprint(s.out, "\n")
}

// energy prints the energy counters as `amd-smi metric -E --csv` does.
func (s *smi) energy() error {
	p, err := s.fetch(math.MaxInt64, true, false)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, "gpu,socket_power,total_energy_consumption")
	for g := range max(s.nodeGPUs, p.gpus) {
		if g == s.missing {
			continue
		}
		j := p.idle * p.until // a GPU outside the engine idles
		if g < len(p.energy) {
			j = p.energy[g]
		}
		fmt.Fprintf(s.out, "%d,%d,%.3f\n", g, int(p.idle), 50_000_000+j)
	}
	return nil
}

// utilization is a plausible utilisation percentage for a power.
func utilization(w, idle float64) float64 {
	return math.Max(0, math.Min(100, (w-idle)/(idle*4)*100))
}

// SMIMain is SMI for a process started as nvidia-smi or amd-smi.
func SMIMain(tool string) int {
	return SMI(tool, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
}

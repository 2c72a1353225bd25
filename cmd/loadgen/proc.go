package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's CPU times;
// 100 on every architecture Go supports on Linux.
const clockTicks = 100

// usage is a process's CPU time and resident memory.
type usage struct {
	cpu     float64 // seconds, user + system
	rss     int64   // bytes, now
	peakRSS int64   // bytes, high-water mark; 0 if unknown
}

// meter reads the CPU and memory of the server being loaded.
type meter interface {
	read(ctx context.Context) (usage, error)
	what() string
}

// procMeter reads /proc/PID (this machine's Linux).
type procMeter struct{ pid int }

func (m procMeter) what() string { return fmt.Sprintf("/proc/%d", m.pid) }

// procsMeter is the sum of several processes' usage: the nodes of a
// cluster on this machine.
type procsMeter []procMeter

func (m procsMeter) what() string {
	var w []string
	for _, p := range m {
		w = append(w, p.what())
	}
	return strings.Join(w, " + ")
}

func (m procsMeter) read(ctx context.Context) (usage, error) {
	var sum usage
	for _, p := range m {
		u, err := p.read(ctx)
		if err != nil {
			return usage{}, err
		}
		sum.cpu, sum.rss, sum.peakRSS = sum.cpu+u.cpu, sum.rss+u.rss, sum.peakRSS+u.peakRSS
	}
	return sum, nil
}

func (m procMeter) read(context.Context) (usage, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.pid))
	if err != nil {
		return usage{}, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start at field 3.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 22 {
		return usage{}, fmt.Errorf("/proc/%d/stat: %d fields", m.pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return usage{}, fmt.Errorf("/proc/%d/stat: bad CPU times", m.pid)
	}
	u := usage{cpu: float64(utime+stime) / clockTicks}
	st, err := os.Open(fmt.Sprintf("/proc/%d/status", m.pid))
	if err != nil {
		return usage{}, err
	}
	defer st.Close()
	sc := bufio.NewScanner(st)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			u.rss = kb << 10
		case "VmHWM":
			u.peakRSS = kb << 10
		}
	}
	return u, sc.Err()
}

// metricsMeter reads process_cpu_seconds_total and
// process_resident_memory_bytes from the server's metrics.
type metricsMeter struct {
	url  string
	fams families
}

func (m metricsMeter) what() string { return m.url }

func (m metricsMeter) read(ctx context.Context) (usage, error) {
	fams, err := m.fams(ctx)
	if err != nil {
		return usage{}, err
	}
	cpu, ok := value(fams, "process_cpu_seconds_total")
	if !ok {
		return usage{}, fmt.Errorf("%s: no process_cpu_seconds_total", m.url)
	}
	rss, _ := value(fams, "process_resident_memory_bytes")
	return usage{cpu: cpu, rss: int64(rss)}, nil
}

// newMeter picks how to read the usage of the server at base: its pids
// (summed, for the nodes of a cluster), its metrics (fams), or nothing.
func newMeter(base string, pids []int, fams families) meter {
	switch {
	case len(pids) == 1:
		return procMeter{pids[0]}
	case len(pids) > 1:
		var m procsMeter
		for _, p := range pids {
			m = append(m, procMeter{p})
		}
		return m
	case fams != nil:
		return metricsMeter{metricsURL(base), fams}
	}
	return nil
}

// loadAverage is this machine's 1, 5 and 15-minute load averages, to
// print beside the figures (they move with whatever else runs), or
// "unknown" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

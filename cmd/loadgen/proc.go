package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
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
// process_resident_memory_bytes from the server's /metrics.
type metricsMeter struct{ url, token string }

func (m metricsMeter) what() string { return m.url }

func (m metricsMeter) read(ctx context.Context) (usage, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", m.url, nil)
	if err != nil {
		return usage{}, err
	}
	if m.token != "" {
		req.Header.Set("Authorization", "Bearer "+m.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return usage{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return usage{}, fmt.Errorf("GET %s: %s", m.url, res.Status)
	}
	var u usage
	found := 0
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_cpu_seconds_total":
			u.cpu, found = v, found+1
		case "process_resident_memory_bytes":
			u.rss = int64(v)
		}
	}
	if err := sc.Err(); err != nil {
		return usage{}, err
	}
	if found == 0 {
		return usage{}, fmt.Errorf("GET %s: no process_cpu_seconds_total", m.url)
	}
	return u, nil
}

// newMeter picks how to read the server's usage: its pid, its /metrics
// (with an admin token when given), or nothing.
func newMeter(base string, pid int, metrics bool, token string) meter {
	switch {
	case pid > 0:
		return procMeter{pid}
	case metrics || token != "":
		return metricsMeter{strings.TrimSuffix(base, "/") + "/metrics", token}
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

package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuTimes is the whole machine's CPU time so far, from /proc/stat: busy (every process:
// Postgres, the workers, this one; user, nice, system, irq and softirq time) and steal
// (time the hypervisor gave this machine's CPUs to others while it had work for them).
type cpuTimes struct{ busy, steal time.Duration }

func (c cpuTimes) minus(o cpuTimes) cpuTimes {
	return cpuTimes{busy: c.busy - o.busy, steal: c.steal - o.steal}
}

// machineCPU reads cpuTimes; ok is false where there is no /proc/stat.
func machineCPU() (t cpuTimes, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return t, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return t, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return t, false
	}
	ticks := func(i int) (time.Duration, bool) {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		// USER_HZ is 100 on every Linux this runs on.
		return time.Duration(n) * 10 * time.Millisecond, err == nil
	}
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system (idle iowait) irq softirq
		d, ok := ticks(i)
		if !ok {
			return t, false
		}
		t.busy += d
	}
	t.steal, ok = ticks(8)
	return t, ok
}

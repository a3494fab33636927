package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// machineCPU is the whole machine's busy CPU time so far (every process: Postgres, the
// workers, this one), from /proc/stat; ok is false where there is none. Busy is user,
// nice, system, irq and softirq time.
func machineCPU() (busy time.Duration, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system (idle iowait) irq softirq
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// tableColumns are the table's columns, in order; the test checks the
// header against them.
var tableColumns = []string{"scenario", "client", "sent", "after 1st failure", "saved", "wall", "measured", "goal"}

// writeTable prints the report for people: the setup notes, one table of
// scenario × client, and the goals with met or MISSED.
func writeTable(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "Breakwater side by side: go run ./bench (%d CPUs, load %s before, %s after, %v)\n",
		rep.CPUs, load(rep.LoadBefore), load(rep.LoadAfter), rep.Finished.Sub(rep.Started).Round(time.Second))
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(tableColumns, "\t"))
	fmt.Fprintln(tw, strings.Repeat("-\t", len(tableColumns)-1)+"-")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d/%d\t%s\t%s\t%s\n",
			r.Scenario, r.Client, r.Requests, into(r.IntoFailure), r.Saved, r.Pages, wall(r), r.Measured, goalCell(r.Goal))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var goals []Result
	for _, r := range rep.Results {
		if r.Goal != nil {
			goals = append(goals, r)
		}
	}
	if len(goals) > 0 {
		fmt.Fprintln(w, "\nGoals, judged on this run's figures; breakwater and drop-in rows each have their own:")
		for _, r := range goals {
			fmt.Fprintf(w, "  %-14s %-10s %-7s %s: %s\n", r.Scenario, r.Client, verdict(r.Goal.Met), r.Goal.Text, r.Goal.Measured)
		}
	}
	return nil
}

// writeJSON prints the report for machines.
func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func into(n int) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

func wall(r Result) string {
	s := secs(time.Duration(r.Wall)).String()
	if r.Cut {
		s = "≥ " + s + " (cut)"
	}
	return s
}

func goalCell(g *Goal) string {
	if g == nil {
		return ""
	}
	return verdict(g.Met) + ": " + g.Measured
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

func load(l float64) string {
	if l < 0 {
		return "?"
	}
	return fmt.Sprintf("%.2f", l)
}

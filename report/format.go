package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// Format is how a report is written.
type Format uint8

const (
	// Text is an aligned table for people.
	Text Format = iota
	// JSON is one indented JSON object for machines.
	JSON
)

// Write writes r to w in format f. JSON is one indented JSON object and a
// newline. Text is the outcome and its findings, the run's times and
// volume, then one aligned row per domain and a total with a legend of the
// columns shown, then the URLs dead of failures by domain and cause, then
// the selector_broken diagnoses; columns for throttled, blocked, gone,
// other 4xx, robots, dead, pauses and the pace appear only when some domain
// has one.
func (r Report) Write(w io.Writer, f Format) error {
	if f == JSON {
		return r.writeJSON(w)
	}
	return r.writeText(w)
}

// writeJSON writes r as one indented JSON object and a newline.
func (r Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}

// Package output renders reports: aligned tables for a person, indented
// JSON, JUnit XML for CI. Every command and every package that formats a
// report (validate, policy) writes through it, so the layout of a table
// or the indentation of a JSON document is chosen in one place.
//
// It writes only to the io.Writer it is given; it never opens a file or
// a terminal.
//
// # Errors
//
// The first write error is kept and returned by Flush (tables) or by the
// writing function (JSON, JUnit), wrapped with what was being written.
package output

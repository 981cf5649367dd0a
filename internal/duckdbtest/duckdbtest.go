// Package duckdbtest runs SQL in DuckDB, an independent reader of the
// Parquet files and Delta logs ckgate writes. It uses DuckDB's Node.js
// client (@duckdb/node-api, pinned in scripts/install-tools.sh, installed
// into .tools/duckdb) through the node on PATH.
//
// When DuckDB or node is missing, Query skips the test with install
// instructions, or fails it when the CI environment variable is set (as
// internal/emulator does for the storage emulators).
package duckdbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/internal/emulator"
)

// Result is what one query returned: the column names and DuckDB types
// ("TIMESTAMP WITH TIME ZONE", "BIGINT", "VARCHAR", ...) and the rows, each
// value as DuckDB's JSON form of it (numbers as JSON numbers or strings for
// big integers, timestamps as strings).
type Result struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	Rows    [][]any  `json:"rows"`
}

// Col is the index of column name (-1 when absent).
func (r Result) Col(name string) int {
	for i, c := range r.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// script reads SQL statements from stdin (the last one's result is
// printed) and writes the result as JSON.
const script = `
const { DuckDBInstance } = require(process.argv[1]);
let sql = '';
process.stdin.on('data', d => { sql += d; });
process.stdin.on('end', async () => {
  try {
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    const r = await c.runAndReadAll(sql);
    const out = { columns: r.columnNames(), types: r.columnTypes().map(t => t.toString()), rows: r.getRowsJson() };
    process.stdout.write(JSON.stringify(out));
  } catch (e) {
    process.stderr.write(String(e && e.message || e));
    process.exit(1);
  }
});
`

// find returns the @duckdb/node-api module directory and node.
func find() (module, node string, err error) {
	root, err := emulator.RepoRoot()
	if err != nil {
		return "", "", err
	}
	module = filepath.Join(root, ".tools", "duckdb", "node_modules", "@duckdb", "node-api")
	if _, err := os.Stat(filepath.Join(module, "package.json")); err != nil {
		return "", "", fmt.Errorf("%w: @duckdb/node-api not found in .tools/duckdb; run scripts/install-tools.sh (make tools)", emulator.ErrMissing)
	}
	if node, err = exec.LookPath("node"); err != nil {
		return "", "", fmt.Errorf("%w: node not on PATH (DuckDB's client runs on it)", emulator.ErrMissing)
	}
	return module, node, nil
}

// Query runs sql (one or more statements; the result is the last one's).
// A DuckDB error fails the test.
func Query(t testing.TB, sql string) Result {
	t.Helper()
	r, err := Run(t, sql)
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, sql)
	}
	return r
}

// Run is Query returning DuckDB's error instead of failing.
func Run(t testing.TB, sql string) (Result, error) {
	t.Helper()
	module, node, err := find()
	emulator.Require(t, err)
	cmd := exec.Command(node, "-e", script, module)
	cmd.Stdin = bytes.NewReader([]byte(sql))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var r Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Result{}, fmt.Errorf("duckdb output: %w", err)
	}
	return r, nil
}

// Quote quotes s as a SQL string literal.
func Quote(s string) string {
	b := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return string(append(b, '\''))
}

package compat_test

import (
	"fmt"

	"github.com/ckgate/ckgate/engine/compat"
)

// A dedup query keyed by one string column, as a Spark 3.3 checkpoint
// records it (its state schema), compared with the same query that
// deduplicates on two columns.
func ExampleCompare() {
	recorded, err := compat.ParsePlan([]byte(`{"version": 1, "sources": [{"kind": "memory"}], "partitions": 5,
		"operators": [{"kind": "dedup", "keys": ["_1 string"]}]}`))
	if err != nil {
		panic(err)
	}
	proposed, err := compat.ParsePlan([]byte(`{"version": 1, "sources": [{"kind": "memory"}], "partitions": 5,
		"operators": [{"kind": "dedup", "keys": ["_1 string", "_2 int"]}]}`))
	if err != nil {
		panic(err)
	}
	res := compat.Compare(&compat.Recorded{Plan: recorded, Writer: compat.WriterSpark}, proposed)
	fmt.Println("compatible:", res.Compatible)
	for _, c := range res.Changes {
		fmt.Printf("%s %s %s: %s → %s\n", c.Class, c.Rule, c.Field, c.Recorded, c.Proposed)
	}
	// Output:
	// compatible: false
	// not_allowed keys operators[id=0].keys: (_1 string) → (_1 string, _2 int)
}

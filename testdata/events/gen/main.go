// Command gen writes the demo clickstream (package engine/demo) into a
// directory: go run ./testdata/events/gen DIR. Writing twice changes
// nothing.
package main

import (
	"fmt"
	"os"

	"github.com/ckgate/ckgate/engine/demo"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./testdata/events/gen DIR")
		os.Exit(2)
	}
	n, err := demo.Write(os.Args[1], demo.Default())
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("clickstream: %d new files in %s (%d in all)\n", n, os.Args[1], demo.Default().Files)
}

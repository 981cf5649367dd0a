// Command ckgate is the checkpoint storage gateway's command-line interface.
// The commands live in App; this file only wires the process to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The first SIGINT or SIGTERM cancels ctx (the command stops and exits
	// 130); after that the default handling is back, so a second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := Run(ctx, Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, os.Args)
	stop()
	os.Exit(code)
}

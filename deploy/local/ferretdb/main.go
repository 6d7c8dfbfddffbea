// Command ferretdb-launcher runs FerretDB v1 (PostgreSQL backend) as a MongoDB-wire server for local runs and tests.
// It embeds the ferretdb package because a bare `go install` of FerretDB's own command panics on a missing
// version file.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	postgresURL := flag.String("postgresql-url", "", "PostgreSQL connection string, e.g. postgres://user@127.0.0.1:5432/ferretdb")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "bad -log-level:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *postgresURL == "" {
		fmt.Fprintln(os.Stderr, "-postgresql-url is required")
		os.Exit(2)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       "postgresql",
		PostgreSQLURL: *postgresURL,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot start FerretDB:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		// Printed once the listener is up, so a supervisor can wait for it.
		fmt.Println("ferretdb listening on", f.MongoDBURI())
	}()
	if err := f.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "FerretDB stopped:", err)
		os.Exit(1)
	}
}

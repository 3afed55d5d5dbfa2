package engram_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram"
	// The built-in offline models: the embedder a store gets when its
	// options name none. Without this import, Options.Embedder or
	// NoEmbedder must be set.
	_ "github.com/engram-memory/engram/embed/builtin"
)

// A store in a SQLite file, one memory added, and a search that finds it by
// meaning: the query shares no word with the memory's text but "user".
func Example() {
	dir, err := os.MkdirTemp("", "engram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	db, err := engram.Open(ctx, filepath.Join(dir, "agent.db"), engram.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if _, err := db.Add(ctx, &engram.Memory{Text: "The user prefers dark themes in every editor"}); err != nil {
		log.Fatal(err)
	}
	resp, err := db.Search(ctx, engram.Query{Query: "which colour scheme does the user like"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range resp.Results {
		fmt.Println(r.Text)
	}
	// Output: The user prefers dark themes in every editor
}

// A keyword-only store needs no embedding model: the program imports the
// root alone (no model and no Weaviate client is linked in), and the
// location may name the SQLite file as a path or as sqlite:///path.
func ExampleOpen_keywordOnly() {
	dir, err := os.MkdirTemp("", "engram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	db, err := engram.Open(ctx, "sqlite://"+filepath.Join(dir, "agent.db"), engram.Options{NoEmbedder: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if _, err := db.Add(ctx, &engram.Memory{Text: "Deploys run from the release branch"}); err != nil {
		log.Fatal(err)
	}
	resp, err := db.Search(ctx, engram.Query{Query: "release deploys"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Strategy, len(resp.Results), resp.Results[0].Text)
	// Output: bm25 1 Deploys run from the release branch
}

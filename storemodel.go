package engram

import (
	"context"
	"log/slog"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
)

// settingModel is the store setting naming the model the store's last
// reindex embedded its memories with (Reindex writes it as it starts).
const settingModel = "embed_model"

// latestModeler is a backend that names the model of its most recently
// written vector without loading an index (the SQLite one).
type latestModeler interface {
	LatestModel(ctx context.Context) (string, error)
}

// storeEmbedder is the embedder a store opened with no embedder named uses:
// the default model def, unless the store's vectors come from another
// built-in model linked into this program, which it then keeps, so that a
// store embedded before the default changed stays comparable without a
// reindex (ENGRAM_EMBEDDER=bge-small engram reindex moves it to the new
// default). The store's model is the one its last reindex named, else the
// model of its latest vector (SQLite), else the one most of its vectors
// come from (another backend). It never fails: a store it cannot read is
// given def, and the search says what does not match.
func storeEmbedder(ctx context.Context, be backend.Backend, def embed.Embedder, log *slog.Logger) embed.Embedder {
	model, err := storeModel(ctx, be)
	if err != nil {
		log.Warn("could not read the store's embedding model; using the default", "default", def.Model(), "err", err)
		return def
	}
	if model == "" || model == def.Model() {
		return def
	}
	for _, e := range embed.Each() {
		if embed.IsInProcess(e) && e.Model() == model {
			log.Debug("the store keeps its built-in model", "model", model, "default", def.Model())
			return e
		}
	}
	return def // not a built-in model of this program: searches say so
}

// storeModel is the model a store's vectors come from ("" when it has none
// or cannot say), as storeEmbedder describes.
func storeModel(ctx context.Context, be backend.Backend) (string, error) {
	if s, ok := be.(backend.Settings); ok {
		v, found, err := s.Setting(ctx, settingModel)
		if err != nil {
			return "", err
		}
		if found && v != "" {
			return v, nil
		}
	}
	if l, ok := be.(latestModeler); ok {
		return l.LatestModel(ctx)
	}
	models, err := be.Models(ctx)
	if err != nil {
		return "", err
	}
	best, most := "", 0
	for m, info := range models {
		if info.Count > most || info.Count == most && m < best {
			best, most = m, info.Count
		}
	}
	return best, nil
}

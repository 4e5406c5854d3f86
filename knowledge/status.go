package knowledge

import (
	"context"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Status reports the store's path, schema version, size (database and
// WAL), row counts, first projects and vector graph.
func (s *Store) Status(ctx context.Context) (*api.StoreStatus, error) {
	v, err := s.db.Version(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := s.graph.Counts(ctx)
	if err != nil {
		return nil, err
	}
	page, err := s.graph.Projects(ctx, &graphop.ProjectList{Limit: new(op.MaxLimit)})
	if err != nil {
		return nil, err
	}
	vectors, err := s.vectors.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &api.StoreStatus{Store: s.Layer(), Path: s.Path(), SchemaVersion: v, SizeBytes: s.db.Size(), Counts: *counts,
		Projects: page.Items, Vectors: vectors}, nil
}

package knowledge

import (
	"context"

	"github.com/pi-actors/pi-actors/knowledge/api"
)

// AddNode runs node_add: one node with its provenance (source, ref, the
// task), its links, an optional node it supersedes, and the conflicts its
// name raises with live nodes of the same name. req must have passed
// Validate.
func (s *Store) AddNode(ctx context.Context, c Caller, req *api.NodeAdd) (*api.NodeAdded, error) {
	task := req.TaskID
	if task != "" || c.RunID != "" {
		var err error
		if task, err = s.taskID("taskId", req.TaskID, c); err != nil {
			return nil, err
		}
	}
	trust := api.DefaultTrust(req.Domain, req.Type, req.Source, req.Verified)
	if req.Trust != nil {
		trust = *req.Trust
	}
	n := &nodeIn{domain: req.Domain, typ: req.Type, name: req.Name, content: req.Content, trust: trust,
		verified: req.Verified, source: req.Source, ref: req.Ref, task: task}
	if req.Domain == api.DomainCode && req.Ref != "" {
		n.path = req.Ref
	}
	s.embedNodes([]*nodeIn{n})
	v, err := s.writeGraph(ctx, func(tx *vtx) (any, error) {
		if req.Supersedes != "" {
			if err := nodeExists(ctx, tx, "supersedes", req.Supersedes); err != nil {
				return nil, err
			}
		}
		for _, l := range req.Links {
			if err := nodeExists(ctx, tx, "links", l.To); err != nil {
				return nil, err
			}
		}
		now := s.now()
		if err := tx.insertNode(ctx, n, now); err != nil {
			return nil, err
		}
		if req.Supersedes != "" {
			if err := tx.supersede(ctx, req.Supersedes, n.id, now); err != nil {
				return nil, err
			}
		}
		for _, l := range req.Links {
			if err := tx.addEdge(ctx, n.id, l.Type, l.To, now); err != nil {
				return nil, err
			}
		}
		conflicts, err := tx.detectConflicts(ctx, n, now)
		if err != nil {
			return nil, err
		}
		node, err := s.loadNode(ctx, tx, "id", n.id)
		if err != nil {
			return nil, err
		}
		return &api.NodeAdded{Node: *node, Conflicts: conflicts}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*api.NodeAdded), nil
}

package vector

import (
	"context"
	"fmt"

	"golang.org/x/text/unicode/norm"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// AddNode runs node_add: one node with its provenance (source, ref, the
// task), its links, an optional node it supersedes, and the conflicts its
// name raises with live nodes of the same name. req must have passed
// Validate.
func (s *Store) AddNode(ctx context.Context, c store.Caller, req *vectorop.NodeAdd) (*vectorop.NodeAdded, error) {
	out, err := s.AddNodes(ctx, c, []*vectorop.NodeAdd{req})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// AddNodes runs many node_add requests (each validated) in one write
// transaction: all of them apply or none does; the first failing request
// aborts the batch with its error's details.index set. Bulk loads are
// many times faster this way.
func (s *Store) AddNodes(ctx context.Context, c store.Caller, reqs []*vectorop.NodeAdd) ([]*vectorop.NodeAdded, error) {
	ns := make([]*nodeIn, len(reqs))
	for i, req := range reqs {
		if e := req.Validate(); e != nil {
			if len(reqs) == 1 {
				return nil, e
			}
			return nil, op.AtIndex(e, i)
		}
		n, err := s.nodeOf(c, req)
		if err != nil {
			if e, ok := op.AsError(err); ok && len(reqs) > 1 {
				return nil, op.AtIndex(e, i)
			}
			return nil, err
		}
		ns[i] = n
	}
	s.embedNodes(ns)
	out := make([]*vectorop.NodeAdded, len(reqs))
	_, err := s.writeGraph(ctx, func(tx *vtx) (any, error) {
		for i, req := range reqs {
			v, err := s.addNode(ctx, tx, req, ns[i])
			if err != nil {
				if e, ok := op.AsError(err); ok && len(reqs) > 1 {
					return nil, op.AtIndex(e, i)
				}
				return nil, err
			}
			out[i] = v
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// nodeOf makes the node a node_add request writes.
func (s *Store) nodeOf(c store.Caller, req *vectorop.NodeAdd) (*nodeIn, error) {
	task := req.TaskID
	if task != "" || c.RunID != "" {
		var err error
		if task, err = s.db.TaskID("taskId", req.TaskID, c); err != nil {
			return nil, err
		}
	}
	trust := vectorop.DefaultTrust(req.Domain, req.Type, req.Source, req.Verified)
	if req.Trust != nil {
		trust = *req.Trust
	}
	// Text is kept composed (NFC), as queries are: a name or content
	// written decomposed (macOS's form) is found and conflicts as typed.
	n := &nodeIn{domain: req.Domain, typ: req.Type, name: norm.NFC.String(req.Name), content: norm.NFC.String(req.Content), trust: trust,
		verified: req.Verified, source: req.Source, ref: req.Ref, task: task}
	if req.Domain == vectorop.DomainCode && req.Ref != "" {
		n.path = req.Ref
	}
	return n, nil
}

// addNode writes one node_add request's node in tx.
func (s *Store) addNode(ctx context.Context, tx *vtx, req *vectorop.NodeAdd, n *nodeIn) (*vectorop.NodeAdded, error) {
	if req.Supersedes != "" {
		if err := store.Exists(ctx, tx, "vg_nodes", "node", "supersedes", req.Supersedes); err != nil {
			return nil, err
		}
		// Code is the source of truth: ingest supersedes it when its file
		// changes; a statement does not (ranked down for good, and the
		// next ingest saw the file unchanged and left it so).
		var domain string
		if err := tx.QueryRowContext(ctx, `SELECT domain FROM vg_nodes WHERE id = ?`, req.Supersedes).Scan(&domain); err != nil {
			return nil, fmt.Errorf("read node %s: %w", req.Supersedes, err)
		}
		if domain == vectorop.DomainCode && (n.domain != vectorop.DomainCode || n.source != vectorop.SourceCode) {
			return nil, op.Invalid("supersedes", "node %s is code, the source of truth: a %s statement (source %s) cannot supersede it — ingest does when its file changes; add yours without supersedes (a node of the same name records the conflict)", req.Supersedes, n.domain, n.source)
		}
	}
	for _, l := range req.Links {
		if err := store.Exists(ctx, tx, "vg_nodes", "node", "links", l.To); err != nil {
			return nil, err
		}
	}
	now := store.Now()
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
	return &vectorop.NodeAdded{Node: *node, Conflicts: conflicts}, nil
}

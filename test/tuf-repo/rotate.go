package main

import (
	"fmt"
	"slices"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

type rotation struct {
	newKeys   int // root keys in the new root; 0 keeps the current count
	threshold int // 0 keeps the current threshold
	signOld   int // how many old root keys sign the new root (allKeys: every one)
	signNew   int // how many new root keys sign it (allKeys: every one)
	// Top-level roles that get fresh keys too (as many as they had).
	roles []string
}

// rotateRoot writes root N+1 with fresh root keys, signed by old and new keys as asked, then
// republishes whatever role had its keys replaced so it is signed by keys the new root trusts.
func (r *repo) rotateRoot(rot rotation) error {
	for _, role := range rot.roles {
		if role == metadata.ROOT || !isTopLevel(role) {
			return fmt.Errorf("--rotate-role takes timestamp, snapshot or targets, got %q", role)
		}
	}
	rootRole := r.root.Signed.Roles[metadata.ROOT]
	oldIDs := slices.Clone(rootRole.KeyIDs)
	if rot.newKeys == 0 {
		rot.newKeys = len(oldIDs)
	}
	if rot.threshold == 0 {
		rot.threshold = min(rootRole.Threshold, rot.newKeys)
	}
	if rot.threshold < 1 || rot.threshold > rot.newKeys {
		return fmt.Errorf("--threshold %d is not between 1 and --new-keys %d", rot.threshold, rot.newKeys)
	}
	newIDs, err := r.replaceKeys(metadata.ROOT, rot.newKeys)
	if err != nil {
		return err
	}
	r.root.Signed.Roles[metadata.ROOT].Threshold = rot.threshold
	for _, role := range rot.roles {
		if _, err := r.replaceKeys(role, len(r.root.Signed.Roles[role].KeyIDs)); err != nil {
			return err
		}
	}
	r.root.Signed.Version++
	if err := r.writeRoot([][]string{oldIDs, newIDs}, []int{rot.signOld, rot.signNew}); err != nil {
		return err
	}
	return r.republishRotated(rot.roles)
}

// replaceKeys swaps all of a top-level role's keys in root for n new ones; returns their ids.
func (r *repo) replaceKeys(role string, n int) ([]string, error) {
	for _, id := range slices.Clone(r.root.Signed.Roles[role].KeyIDs) {
		if err := r.root.Signed.RevokeKey(id, role); err != nil {
			return nil, err
		}
	}
	var ids []string
	for range n {
		key, err := r.newKey(role)
		if err != nil {
			return nil, err
		}
		if err := r.root.Signed.AddKey(key, role); err != nil {
			return nil, err
		}
		id, _ := key.ID()
		ids = append(ids, id)
	}
	return ids, nil
}

// republishRotated signs new versions with the new keys: a role signed only by keys the new
// root no longer lists would fail verification. Snapshot and timestamp follow what changed.
func (r *repo) republishRotated(roles []string) error {
	if len(roles) == 0 {
		return nil
	}
	changedTargets := []string{}
	if slices.Contains(roles, metadata.TARGETS) {
		changedTargets = append(changedTargets, metadata.TARGETS)
		// A new version even if nothing else changed, signed by the new keys; staged changes
		// to targets go out with it.
		r.touch(metadata.TARGETS)
		if err := r.writeTargets(metadata.TARGETS, allKeys); err != nil {
			return err
		}
	}
	if len(changedTargets) > 0 || slices.Contains(roles, metadata.SNAPSHOT) {
		if err := r.writeSnapshot(changedTargets, allKeys); err != nil {
			return err
		}
	}
	return r.writeTimestamp(allKeys)
}

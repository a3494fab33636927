package attachment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Location is where an attachment's file lives, as its row says (attachments.storage).
type Location string

// The locations Taskweave knows: the local directory (TW_ATTACHMENTS_DIR) and the
// S3-compatible bucket (TW_STORAGE=s3).
const (
	LocationDisk Location = "disk"
	LocationS3   Location = "s3"
)

// Stores are the storages attachment files live in. Uploads go to one of them; every
// row is read from the storage its location names, so rows written before a switch to
// the bucket (and not moved yet, see Migrate) are still served from the disk.
type Stores struct {
	uploads Storage
	all     map[Location]Storage
}

// NewStores takes uploads into the first storage and reads from all of them; a later
// storage with a location already given is ignored.
func NewStores(uploads Storage, more ...Storage) *Stores {
	s := &Stores{uploads: uploads, all: map[Location]Storage{}}
	for _, st := range append([]Storage{uploads}, more...) {
		if st == nil {
			continue
		}
		if _, ok := s.all[st.Location()]; !ok {
			s.all[st.Location()] = st
		}
	}
	return s
}

// Uploads is the storage new files go to.
func (s *Stores) Uploads() Storage { return s.uploads }

// errNoStorage is a row whose location this process has no storage for (a disk row on
// an API machine without the directory): a storage failure, not a missing file.
var errNoStorage = errors.New("no storage configured for this location")

// At is the storage of loc.
func (s *Stores) At(loc Location) (Storage, error) {
	if st, ok := s.all[loc]; ok {
		return st, nil
	}
	return nil, fmt.Errorf("%w: %q", errNoStorage, loc)
}

// Checker is a storage that can tell whether it answers (the bucket: /readyz).
type Checker interface {
	Check(ctx context.Context) error
}

// Check reports the first storage that does not answer.
func (s *Stores) Check(ctx context.Context) error {
	for _, st := range s.all {
		if c, ok := st.(Checker); ok {
			if err := c.Check(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Presigner is a storage that can hand a client a time-limited address of a file, so
// the bytes need not pass through the API (TW_S3_PRESIGN).
type Presigner interface {
	// PresignGet returns an address valid for ttl that answers the file with the given
	// Content-Type and Content-Disposition. ok is false when presigning is switched off.
	PresignGet(ctx context.Context, name string, ttl time.Duration, contentType, disposition string) (url string, ok bool, err error)
}

// MaxPresignTTL is the longest a presigned download address is valid.
const MaxPresignTTL = 5 * time.Minute

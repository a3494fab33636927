package core

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// MaxPageSize clamps every paged list (docs/api-conventions.md#pages).
const MaxPageSize = 200

// PageRequest is a parsed page/size query.
type PageRequest struct {
	Page int
	Size int
}

// Offset is the first row of the page.
func (p PageRequest) Offset() int { return p.Page * p.Size }

// ParsePage reads `page` (0-based, default 0) and `size` (default def, clamped to 200);
// a negative page, a page past MaxInt32 (far past any last page, and page × size must
// not overflow) or a size below 1 is BAD_REQUEST.
func ParsePage(c *fiber.Ctx, def int) (PageRequest, error) {
	p := PageRequest{Page: 0, Size: def}
	if v := c.Query("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return p, BadRequest("INVALID_PAGE")
		}
		p.Page = n
	}
	if v := c.Query("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, BadRequest("INVALID_PAGE")
		}
		p.Size = min(n, MaxPageSize)
	}
	return p, nil
}

// SortJSON is the sort member of a page: Taskweave's pages are never sorted by request.
type SortJSON struct {
	Empty    bool `json:"empty"`
	Sorted   bool `json:"sorted"`
	Unsorted bool `json:"unsorted"`
}

// PageableJSON is the pageable member of a page.
type PageableJSON struct {
	PageNumber int      `json:"pageNumber"`
	PageSize   int      `json:"pageSize"`
	Offset     int      `json:"offset"`
	Paged      bool     `json:"paged"`
	Unpaged    bool     `json:"unpaged"`
	Sort       SortJSON `json:"sort"`
}

// Page is the Spring Data page object of docs/api-conventions.md#pages; every member is
// always sent.
type Page[T any] struct {
	Content          []T          `json:"content"`
	Number           int          `json:"number"`
	Size             int          `json:"size"`
	TotalElements    int          `json:"totalElements"`
	TotalPages       int          `json:"totalPages"`
	NumberOfElements int          `json:"numberOfElements"`
	First            bool         `json:"first"`
	Last             bool         `json:"last"`
	Empty            bool         `json:"empty"`
	Sort             SortJSON     `json:"sort"`
	Pageable         PageableJSON `json:"pageable"`
	// TotalElementsExact is sent by the lists that count at most store.CountAhead rows
	// past the page (NewCountedPage): false when totalElements is that bound, not the
	// number of all matches.
	TotalElementsExact *bool `json:"totalElementsExact,omitempty"`
}

// NewPage wraps one page of content with its totals.
func NewPage[T any](content []T, req PageRequest, total int) Page[T] {
	if content == nil {
		content = []T{}
	}
	pages := 0
	if req.Size > 0 {
		pages = (total + req.Size - 1) / req.Size
	}
	unsorted := SortJSON{Empty: true, Sorted: false, Unsorted: true}
	return Page[T]{
		Content: content, Number: req.Page, Size: req.Size, TotalElements: total, TotalPages: pages,
		NumberOfElements: len(content), First: req.Page == 0, Last: req.Page+1 >= pages, Empty: len(content) == 0,
		Sort:     unsorted,
		Pageable: PageableJSON{PageNumber: req.Page, PageSize: req.Size, Offset: req.Offset(), Paged: true, Sort: unsorted},
	}
}

// NewCountedPage is NewPage for a list whose total was counted up to a bound
// (store.CountLimit): exact false says more rows match than total. totalPages and last
// follow total, so a client paging while number + 1 < totalPages still reaches every
// row: the next page's count reaches further.
func NewCountedPage[T any](content []T, req PageRequest, total int, exact bool) Page[T] {
	p := NewPage(content, req, total)
	p.TotalElementsExact = &exact
	return p
}

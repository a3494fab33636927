package core

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// MaxPageSize clamps every paged list (docs/api-conventions.md#pages).
const MaxPageSize = 200

// PageRequest is a parsed page/size/cursor query.
type PageRequest struct {
	Page int
	Size int
	// Cursor is set when the request sent `cursor` (cursor.go): the page is the Size rows
	// after its position, found by a keyset predicate rather than an offset.
	Cursor *Cursor
}

// Offset is the first row of the page; 0 in a cursor walk, whose position is the
// cursor's.
func (p PageRequest) Offset() int {
	if p.Cursor != nil {
		return 0
	}
	return p.Page * p.Size
}

// Limit is how many rows a list reads: Size, and in a cursor walk one more, which says
// whether another page follows (Next) and is cut off (Trim).
func (p PageRequest) Limit() int {
	if p.Cursor != nil {
		return p.Size + 1
	}
	return p.Size
}

// ParsePage reads `page` (0-based, default 0), `size` (default def, clamped to 200) and
// `cursor`; a negative page, a page past MaxInt32 (far past any last page, and page ×
// size must not overflow) or a size below 1 is BAD_REQUEST, and so is a cursor the
// server did not sign (INVALID_CURSOR) or one sent with a page (INVALID_PAGE).
func ParsePage(c *fiber.Ctx, def int) (PageRequest, error) {
	p := PageRequest{Page: 0, Size: def}
	if c.Context().QueryArgs().Has("cursor") {
		cur, err := parseCursor(c, c.Query("cursor"))
		if err != nil {
			return p, err
		}
		if c.Query("page") != "" {
			return p, BadRequest("INVALID_PAGE")
		}
		p.Cursor = cur
	}
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
	// NextCursor continues the walk after this page (cursor.go); null at the end.
	NextCursor *string `json:"nextCursor"`
	// TotalElementsExact is sent by the lists that count a bounded number of rows past
	// the page (store.CountAhead, store.PageCountAhead; NewCountedPage): false when
	// totalElements is that bound, not the number of all matches.
	TotalElementsExact *bool `json:"totalElementsExact,omitempty"`
}

// NewPage wraps one page of content with its totals and the cursor after it (nil at
// the end). In a cursor walk number and offset are 0 (the position is the cursor's),
// first says the walk's start and last that no cursor follows.
func NewPage[T any](content []T, req PageRequest, total int, next *string) Page[T] {
	if content == nil {
		content = []T{}
	}
	pages := 0
	if req.Size > 0 {
		pages = (total + req.Size - 1) / req.Size
	}
	unsorted := SortJSON{Empty: true, Sorted: false, Unsorted: true}
	first, last := req.Page == 0, req.Page+1 >= pages
	if req.Cursor != nil {
		first, last = req.Cursor.Start(), next == nil
	}
	return Page[T]{
		Content: content, Number: req.Page, Size: req.Size, TotalElements: total, TotalPages: pages,
		NumberOfElements: len(content), First: first, Last: last, Empty: len(content) == 0,
		Sort:       unsorted,
		Pageable:   PageableJSON{PageNumber: req.Page, PageSize: req.Size, Offset: req.Offset(), Paged: true, Sort: unsorted},
		NextCursor: next,
	}
}

// NewCountedPage is NewPage for a list whose total was counted up to a bound
// (store.CountLimit, store.PageCountLimit): exact false says more rows match than total. totalPages and last
// follow total, so a client paging while number + 1 < totalPages still reaches every
// row: the next page's count reaches further.
func NewCountedPage[T any](content []T, req PageRequest, total int, exact bool, next *string) Page[T] {
	p := NewPage(content, req, total, next)
	p.TotalElementsExact = &exact
	return p
}

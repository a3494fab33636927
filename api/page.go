package api

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// maxPageSize clamps every paged list (docs/api-conventions.md#pages).
const maxPageSize = 200

// pageRequest is a parsed page/size query.
type pageRequest struct {
	Page int
	Size int
}

// Offset is the first row of the page.
func (p pageRequest) Offset() int { return p.Page * p.Size }

// parsePage reads `page` (0-based, default 0) and `size` (default def, clamped to 200);
// a negative page, a page past MaxInt32 (far past any last page, and page × size must
// not overflow) or a size below 1 is BAD_REQUEST.
func parsePage(c *fiber.Ctx, def int) (pageRequest, error) {
	p := pageRequest{Page: 0, Size: def}
	if v := c.Query("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return p, badRequest("INVALID_PAGE")
		}
		p.Page = n
	}
	if v := c.Query("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, badRequest("INVALID_PAGE")
		}
		p.Size = min(n, maxPageSize)
	}
	return p, nil
}

type sortJSON struct {
	Empty    bool `json:"empty"`
	Sorted   bool `json:"sorted"`
	Unsorted bool `json:"unsorted"`
}

type pageableJSON struct {
	PageNumber int      `json:"pageNumber"`
	PageSize   int      `json:"pageSize"`
	Offset     int      `json:"offset"`
	Paged      bool     `json:"paged"`
	Unpaged    bool     `json:"unpaged"`
	Sort       sortJSON `json:"sort"`
}

// page is the Spring Data page object of docs/api-conventions.md#pages; every member is
// always sent.
type page[T any] struct {
	Content          []T          `json:"content"`
	Number           int          `json:"number"`
	Size             int          `json:"size"`
	TotalElements    int          `json:"totalElements"`
	TotalPages       int          `json:"totalPages"`
	NumberOfElements int          `json:"numberOfElements"`
	First            bool         `json:"first"`
	Last             bool         `json:"last"`
	Empty            bool         `json:"empty"`
	Sort             sortJSON     `json:"sort"`
	Pageable         pageableJSON `json:"pageable"`
}

// newPage wraps one page of content with its totals.
func newPage[T any](content []T, req pageRequest, total int) page[T] {
	if content == nil {
		content = []T{}
	}
	pages := 0
	if req.Size > 0 {
		pages = (total + req.Size - 1) / req.Size
	}
	unsorted := sortJSON{Empty: true, Sorted: false, Unsorted: true}
	return page[T]{
		Content: content, Number: req.Page, Size: req.Size, TotalElements: total, TotalPages: pages,
		NumberOfElements: len(content), First: req.Page == 0, Last: req.Page+1 >= pages, Empty: len(content) == 0,
		Sort:     unsorted,
		Pageable: pageableJSON{PageNumber: req.Page, PageSize: req.Size, Offset: req.Offset(), Paged: true, Sort: unsorted},
	}
}

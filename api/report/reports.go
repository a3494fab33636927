package report

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/report"
)

// burndownResponse is ReportBurndown in api/openapi/75-reports.yaml.
type burndownResponse struct {
	SprintID string              `json:"sprintId"`
	Days     []burndownDayResult `json:"days"`
}

type burndownDayResult struct {
	Date            string `json:"date"`
	IdealPoints     int64  `json:"idealPoints"`
	RemainingPoints int64  `json:"remainingPoints"`
}

// velocityResponse is ReportVelocity in api/openapi/75-reports.yaml.
type velocityResponse struct {
	Entries []velocityEntryResult `json:"entries"`
}

type velocityEntryResult struct {
	SprintID        string `json:"sprintId"`
	SprintName      string `json:"sprintName"`
	PlannedPoints   int64  `json:"plannedPoints"`
	CompletedPoints int64  `json:"completedPoints"`
}

// cycleTimeResponse is ReportCycleTime in api/openapi/75-reports.yaml: one sprint.
type cycleTimeResponse struct {
	SprintID              string                 `json:"sprintId"`
	Issues                []cycleTimeIssueResult `json:"issues"`
	AverageCycleTimeHours *float64               `json:"averageCycleTimeHours"`
}

type cycleTimeIssueResult struct {
	IssueID        string   `json:"issueId"`
	IssueKey       string   `json:"issueKey"`
	CycleTimeHours *float64 `json:"cycleTimeHours"`
}

// cycleTimeSummaryResponse is ReportCycleTimeSummary in api/openapi/75-reports.yaml: the
// cycle time without sprintId.
type cycleTimeSummaryResponse struct {
	Sprints []cycleTimeSprintResult `json:"sprints"`
}

type cycleTimeSprintResult struct {
	SprintID              string   `json:"sprintId"`
	SprintName            string   `json:"sprintName"`
	AverageCycleTimeHours *float64 `json:"averageCycleTimeHours"`
}

// reportSprintID reads the sprintId query parameter; absent is nil unless required.
func reportSprintID(c *fiber.Ctx, mandatory bool) (*uuid.UUID, error) {
	if mandatory && c.Query("sprintId") == "" {
		return nil, core.Required("sprintId")
	}
	return core.QueryID("sprintId", c.Query("sprintId"))
}

// reportViewed runs a report and records REPORT_VIEWED in one transaction. The audit
// job is only inserted when the ALL level is on; a report that fails records nothing.
func (s *handlers) reportViewed(c *fiber.Ctx, a *project.Access, name string, sprintID *uuid.UUID,
	run func(ctx context.Context, db bun.IDB) error) error {
	resourceType, resourceID := "PROJECT", a.Project.ID.String()
	details := map[string]any{"report": name, "projectKey": a.Project.Key, "sprintId": nil}
	if sprintID != nil {
		resourceType, resourceID = "SPRINT", sprintID.String()
		details["sprintId"] = sprintID.String()
	}
	entry, err := core.ReadEntry(core.AuditActor(c), audit.ReportViewed, resourceType, resourceID, a.Project.ID, details)
	if err != nil {
		return err
	}
	return s.RecordInTx(c.UserContext(), entry, run)
}

func (s *handlers) reportBurndown(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	sprintID, err := reportSprintID(c, true)
	if err != nil {
		return err
	}
	var bd *report.Burndown
	err = s.reportViewed(c, a, "burndown", sprintID, func(ctx context.Context, db bun.IDB) error {
		bd, err = report.BurndownOf(ctx, db, a.Project.ID, *sprintID, time.Now())
		return err
	})
	if err != nil {
		return err
	}
	out := burndownResponse{SprintID: bd.SprintID.String(), Days: make([]burndownDayResult, len(bd.Days))}
	for i, d := range bd.Days {
		out.Days[i] = burndownDayResult{Date: d.Date, IdealPoints: d.IdealPoints, RemainingPoints: d.RemainingPoints}
	}
	return c.JSON(out)
}

func (s *handlers) reportVelocity(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	var entries []report.VelocityEntry
	err = s.reportViewed(c, a, "velocity", nil, func(ctx context.Context, db bun.IDB) error {
		entries, err = report.Velocity(ctx, db, a.Project.ID)
		return err
	})
	if err != nil {
		return err
	}
	out := velocityResponse{Entries: make([]velocityEntryResult, len(entries))}
	for i, e := range entries {
		out.Entries[i] = velocityEntryResult{SprintID: e.SprintID.String(), SprintName: e.SprintName,
			PlannedPoints: e.PlannedPoints, CompletedPoints: e.CompletedPoints}
	}
	return c.JSON(out)
}

// reportCycleTime answers per issue with sprintId, else per CLOSED sprint.
func (s *handlers) reportCycleTime(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	sprintID, err := reportSprintID(c, false)
	if err != nil {
		return err
	}
	if sprintID == nil {
		var avgs []report.SprintAverage
		err = s.reportViewed(c, a, "cycle-time", nil, func(ctx context.Context, db bun.IDB) error {
			avgs, err = report.CycleTimeBySprint(ctx, db, a.Project.ID)
			return err
		})
		if err != nil {
			return err
		}
		out := cycleTimeSummaryResponse{Sprints: make([]cycleTimeSprintResult, len(avgs))}
		for i, v := range avgs {
			out.Sprints[i] = cycleTimeSprintResult{SprintID: v.SprintID.String(), SprintName: v.SprintName,
				AverageCycleTimeHours: v.AverageHours}
		}
		return c.JSON(out)
	}
	var ct *report.SprintCycle
	err = s.reportViewed(c, a, "cycle-time", sprintID, func(ctx context.Context, db bun.IDB) error {
		ct, err = report.CycleTime(ctx, db, a.Project.ID, *sprintID)
		return err
	})
	if err != nil {
		return err
	}
	out := cycleTimeResponse{SprintID: ct.SprintID.String(), Issues: make([]cycleTimeIssueResult, len(ct.Issues)),
		AverageCycleTimeHours: ct.AverageHours}
	for i, is := range ct.Issues {
		out.Issues[i] = cycleTimeIssueResult{IssueID: is.IssueID.String(), IssueKey: is.IssueKey, CycleTimeHours: is.Hours()}
	}
	return c.JSON(out)
}

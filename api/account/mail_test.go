package account_test

import (
	"net/mail"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

func TestNotificationMailOverSMTP(t *testing.T) {
	t.Parallel()
	rec := apitest.NewSMTPRecorder(t)
	f := apitest.NotifyProject(t, func(c *workers.Config) {
		c.Mail.Addr, c.Mail.From, c.BaseURL = rec.Addr, "Taskweave <tw@example.com>", "https://tw.example/"
	})
	h := f.H
	apitest.SetLanguage(t, h, f.Member, "de")
	apitest.SetPreference(t, h, f.Member, "STATUS_CHANGED", true, false)

	// A German recipient gets a German mail with the absolute link.
	_, k1 := apitest.NotifyIssue(t, f, f.Owner, "Größe prüfen", &f.Member)
	got := rec.Wait(t, 1)
	require.Len(t, got, 1)
	require.Equal(t, "tw@example.com", got[0].From)
	require.Equal(t, []string{f.Member.Email}, got[0].To)
	m := apitest.ParseMail(t, got[0])
	require.Equal(t, k1+" wurde Ihnen zugewiesen", m.Subject)
	to, err := mail.ParseAddress(m.Header.Get("To"))
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Mia", Address: f.Member.Email}, *to)
	from, err := mail.ParseAddress(m.Header.Get("From"))
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Taskweave", Address: "tw@example.com"}, *from)
	date, err := m.Header.Date()
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), date, time.Minute)
	notification := apitest.FindNotification(t, h, f.Member, "ISSUE_ASSIGNED", k1)
	require.Equal(t, "<"+notification["id"].(string)+"@example.com>", m.Header.Get("Message-ID"))
	require.Equal(t, "1.0", m.Header.Get("MIME-Version"))
	require.Equal(t, "text/plain; charset=UTF-8", m.Header.Get("Content-Type"))
	require.Contains(t, m.Text, "Hallo Mia,\r\n\r\nOwner hat Ihnen "+k1+" „Größe prüfen“ zugewiesen.\r\n")
	require.Contains(t, m.Text, "In Taskweave öffnen: https://tw.example/p/"+f.Key+"/issues/"+k1+"\r\n")
	require.Contains(t, m.Text, "Benachrichtigungseinstellungen")

	// The member switched STATUS_CHANGED e-mails off: the move is notified in-app, but
	// no mail job exists; the next mail, to the English-speaking viewer, is the second.
	apitest.PatchIssueAs(t, f, f.Owner, k1, map[string]any{"statusId": f.Prog})
	apitest.DrainJobs(t, h)
	apitest.FindNotification(t, h, f.Member, "STATUS_CHANGED", k1)
	require.Equal(t, 0, apitest.MailJobs(h, "STATUS_CHANGED"))
	_, k2 := apitest.NotifyIssue(t, f, f.Owner, "Check size", &f.Viewer)
	rec.Wait(t, 2)
	apitest.DrainJobs(t, h)
	got = rec.Mails()
	require.Len(t, got, 2, "nothing but the two assignments was sent")
	require.Equal(t, []string{f.Viewer.Email}, got[1].To)
	m = apitest.ParseMail(t, got[1])
	require.Equal(t, k2+" was assigned to you", m.Subject)
	require.Contains(t, m.Text, "Hello Viv,\r\n\r\nOwner assigned "+k2+" “Check size” to you.\r\n")
	require.Contains(t, m.Text, "Open in Taskweave: https://tw.example/p/"+f.Key+"/issues/"+k2+"\r\n")
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail' AND queue = 'mail' AND state = 'completed'"))
}

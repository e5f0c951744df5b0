-- Truthful statuses (issue 13): a version a correction superseded reports `replaced`, not
-- `active`. Corrections write the status from now on; rows written before are brought in line.
UPDATE memories SET status = 'replaced'
    WHERE replaced_by IS NOT NULL AND status IN ('active', 'resting');

import { describe, expect, it } from "vitest";
import {
  SCHEDULE_COLUMNS,
  scheduleRowOf,
  scheduleRowValues,
  type ScheduleRow,
} from "../../src/store/schedule-row.js";

describe("a series row read as a tuple (raw statements)", () => {
  it("scheduleRowOf reads every column from its SCHEDULE_COLUMNS position", () => {
    // each column a value of its own, so a position read from the wrong index shows
    const row = Object.fromEntries(
      SCHEDULE_COLUMNS.map((c, i) => [c, `${c}:${i}`]),
    ) as unknown as ScheduleRow;
    const back = scheduleRowOf(scheduleRowValues(row));
    expect(back).toStrictEqual(row);
    expect(Object.keys(back)).toEqual([...SCHEDULE_COLUMNS]);
  });
});

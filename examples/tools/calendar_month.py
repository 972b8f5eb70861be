"""Prints one month's calendar; the arguments arrive as a JSON object on stdin."""

import calendar
import json
import sys

arguments = json.load(sys.stdin)
first = calendar.SUNDAY if arguments.get("first_weekday") == "sunday" else calendar.MONDAY
print(calendar.TextCalendar(first).formatmonth(arguments["year"], arguments["month"]).rstrip())

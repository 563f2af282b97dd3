"""Short passages the tests ingest: a plant manual's pump and boiler pages, and two reports
that disagree on one figure."""

from __future__ import annotations

PUMP = (
    "The hydraulic pump must be inspected every 500 operating hours. During inspection the "
    "technician checks the seals, the pressure relief valve and the oil level. A worn seal "
    "causes pressure loss and must be replaced before the pump returns to service. The pump "
    "operates at a nominal pressure of 210 bar and the relief valve opens at 230 bar. "
    "Operators log each inspection in the maintenance ledger with the date and hours."
)
BOILER = (
    "The steam boiler is descaled once a year by a certified contractor. Water hardness is "
    "tested weekly and the feed water treatment is adjusted when hardness exceeds the limit. "
    "Safety valves on the boiler are tested at every annual inspection and sealed afterwards. "
    "The boiler room must be ventilated and kept free of stored materials at all times."
)
REVENUE_A = (
    "Annual report of Northwind Traders. Northwind Traders reported total revenue of "
    "42 million dollars for fiscal year 2023, driven by strong growth in its export segment "
    "and new distribution contracts signed during the year with regional partners."
)
REVENUE_B = (
    "Press summary about Northwind Traders. Northwind Traders reported total revenue of "
    "37 million dollars for fiscal year 2023, driven by strong growth in its export segment "
    "and new distribution contracts signed during the year with regional partners."
)

# Two notes where the offline engine's lead answers half of a two-part question and pauses;
# the other half is its "Also relevant" passage (the review that lets the analyst lead with it).
BOILER_LOG_PLACE = (
    "The boiler log is kept in the plant office next to the pump room. "
    "Visitors sign the visitor book at the gate."
)
BOILER_LOG_ENTRIES = (
    "Each entry of the boiler log records the pressure, the water level and the name of the "
    "operator on shift."
)
BOILER_LOG_QUESTION = "What goes into the boiler log and where is it stored?"

# Two notes that contradict each other on when a bridge opened (and how long it is).
BRIDGE_A = (
    "The Zorblat Bridge\n\nThe Zorblat Bridge spans the river Ulm. It is 1200 m long and was "
    "opened to traffic in 1931. It carries two lanes."
)
BRIDGE_B = (
    "Zorblat Bridge history\n\nThe Zorblat Bridge is 3400 m long. The bridge was opened to "
    "traffic in 1952 after a long delay. It carries four lanes."
)

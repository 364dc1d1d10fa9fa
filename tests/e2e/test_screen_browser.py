"""End to end in headless Chromium: the Data page's attribute screen (issue 19, point 2).

- Raw COMPAS with only its roles: the columns recorded after the outcome, another model's score
  and the copy of priors_count are listed with their reasons; one choice brings `event` back.
- A file with two models' outputs: the other model's columns are listed as another model's,
  named under Compare models, and taken as the reference when the comparison is turned on.

Screenshots (in $DIVERGENCE_ARTIFACTS or tests/e2e/artifacts): screen_1_raw_compas_left_out.png,
screen_1b_raw_compas_reasons.png,
screen_2_raw_compas_brought_back.png, screen_3_two_models_left_out.png,
screen_4_two_models_reference.png, screen_5_personal_identifiers.png and
screen_5b_personal_identifiers_by_value.png (issue 48: a customer export's
personal identifiers listed with their reasons).
"""
from __future__ import annotations

import re

import app_server
import pytest
from personal_table import personal_table
from screen_fixtures import two_models
from test_browser import ARTIFACTS, _goto, _no_exception, browser  # noqa: F401 (fixture)
from test_scan_browser import _give_roles, _pick, _quiet, _upload_raw_compas

pytestmark = pytest.mark.e2e

VIEW = {"width": 1280, "height": 1000}


@pytest.fixture
def server():
    url, proc, log = app_server.start(ARTIFACTS / "server_screen.log", wait=90)
    yield url
    app_server.stop(proc, log)


def _left_out_section(page):
    section = page.get_by_text(re.compile(r"Left out of the default attributes: \d+ columns")).first
    section.wait_for(timeout=60_000)
    return section


def test_raw_compas_left_out_with_reasons_and_brought_back(browser, server):
    page = browser.new_page(viewport=VIEW)
    page.goto(server)
    _upload_raw_compas(page)
    _give_roles(page)
    page.get_by_text("13 attributes: every column not used above, less the 38").first.wait_for(timeout=60_000)
    section = _left_out_section(page)
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "screen_1_raw_compas_left_out.png"), full_page=True)
    grid = page.locator('[data-testid="stExpander"] [data-testid="stDataFrame"]').first
    grid.hover()
    page.mouse.wheel(0, 620)  # the reasons of the measured columns, further down the list
    page.wait_for_timeout(500)  # the canvas grid redraws after the wheel (no DOM change to wait on)
    grid.screenshot(path=str(ARTIFACTS / "screen_1b_raw_compas_reasons.png"))
    # the reasons are in a canvas grid (asserted in AppTest); the add-back choice is real text
    box = page.get_by_role("combobox", name="Add back (slice by these after all)")
    box.click()
    box.fill("event")
    page.get_by_role("option", name="event", exact=True).click()
    _quiet(page)
    _no_exception(page)
    page.get_by_text(re.compile(r"\d+ attributes")).first.wait_for()
    page.get_by_text("Attributes to slice by").first.scroll_into_view_if_needed()
    # one more attribute: the 13 of the screen and event, brought back
    page.get_by_text("14 attributes: every column not used above").first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "screen_2_raw_compas_brought_back.png"), full_page=True)
    page.close()


def test_two_models_file_offers_the_other_model_as_the_reference(browser, server, tmp_path):
    path = tmp_path / "two_models.csv"
    two_models().to_csv(path, index=False)
    page = browser.new_page(viewport=VIEW)
    page.goto(server)
    _goto(page, "1 · Data")
    page.get_by_text("Upload a file").click()
    _quiet(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(path)
    page.get_by_text("4,000 rows × 11 columns").first.wait_for(timeout=60_000)
    _quiet(page)
    _pick(page, "Target (the true value)", "survived")
    page.get_by_text("Predicted labels").first.click()
    _quiet(page)
    _pick(page, "Prediction column", "pred_gb")
    _no_exception(page)
    page.get_by_text("Another model's outputs in this table").first.wait_for(timeout=60_000)
    _left_out_section(page).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "screen_3_two_models_left_out.png"), full_page=True)
    page.get_by_text(re.compile("Compare the model with a reference model")).first.click()
    _quiet(page)
    page.get_by_text(re.compile("against reference '?pred_lr'?")).first.wait_for(timeout=60_000)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "screen_4_two_models_reference.png"), full_page=True)
    page.close()


def test_personal_identifiers_listed_with_their_reasons(browser, server, tmp_path):
    path = tmp_path / "customers.csv"
    personal_table().to_csv(path, index=False)
    page = browser.new_page(viewport=VIEW)
    page.goto(server)
    _goto(page, "1 · Data")
    page.get_by_text("Upload a file").click()
    _quiet(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(path)
    page.get_by_text("25,000 rows × 25 columns").first.wait_for(timeout=90_000)
    _quiet(page)
    _pick(page, "Target (the true value)", "churned")
    page.get_by_text("Predicted labels").first.click()
    _quiet(page)
    _pick(page, "Prediction column", "predicted")
    _no_exception(page)
    # the 7 genuine attributes; 16 left out: the customer id and the 15 personal identifiers
    page.get_by_text("7 attributes: every column not used above, less the 16").first.wait_for(timeout=90_000)
    section = _left_out_section(page)
    section.scroll_into_view_if_needed()
    grid = page.locator('[data-testid="stExpander"] [data-testid="stDataFrame"]').first
    grid.screenshot(path=str(ARTIFACTS / "screen_5_personal_identifiers.png"))
    grid.hover()
    page.mouse.wheel(0, 400)  # the columns told by their values, further down the list
    page.wait_for_timeout(500)  # the canvas grid redraws after the wheel (no DOM change to wait on)
    grid.screenshot(path=str(ARTIFACTS / "screen_5b_personal_identifiers_by_value.png"))
    page.close()

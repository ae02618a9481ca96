"""The analysts' verifier playground: paste an answer and its evidence, see how every number was judged."""

import json

import pytest
from django.urls import reverse

URL = reverse("evals:verifier_playground")
EVIDENCE = json.dumps([
    {"id": "E1", "text": "Factura F-1001 de marzo: monto Bs. 1.234,56, vence el 2024-03-15.", "value": "1234.56"},
    {"id": "E2", "text": "Factura F-1002 de abril: monto USD 45,00.", "value": "45.00"},
])
ANSWER = "Su factura de marzo es de Bs. 1,234.56 [E1]. La de abril es de USD 4.500 [E2]."


@pytest.fixture
def analyst(client, make_staff):
    client.force_login(make_staff("luis", "analyst"))
    return client


@pytest.mark.django_db
def test_the_form_comes_prefilled_with_an_example(analyst):
    response = analyst.get(URL)
    assert response.status_code == 200
    body = response.content.decode()
    assert "Verifier playground" in body
    assert 'name="answer"' in body and "[E2]" in body
    assert "&quot;id&quot;: &quot;E1&quot;" in body  # the example evidence, escaped in the textarea
    assert 'name="customer_view" value="on" checked' in body
    assert "Not grounded" not in body and "<mark" not in body


@pytest.mark.django_db
def test_the_example_shows_a_wrong_citation_and_a_swapped_pair(analyst):
    from evals.views.verifier import EXAMPLE_ANSWER, EXAMPLE_EVIDENCE

    body = analyst.post(URL, {"answer": EXAMPLE_ANSWER, "evidence": EXAMPLE_EVIDENCE, "customer_view": "on"},
                        HTTP_HX_REQUEST="true").content.decode()
    assert body.count('<mark class="bad"') == 3
    assert "31,00 is not in the evidence cited in this sentence ([E2]); it is in E3" in body
    assert "1.234,56 cited the wrong item: the citation after it ([E3]) does not hold it; it is in E1" in body
    assert "<td>[E3]</td>" in body and "<td>[E2][E3]</td>" in body  # the citation each figure answers to


@pytest.mark.django_db
def test_an_analyst_sees_each_number_highlighted_with_its_rule_or_reason(analyst):
    response = analyst.post(URL, {"answer": ANSWER, "evidence": EVIDENCE, "customer_view": "on"})
    body = response.content.decode()
    assert "<html" in body  # without htmx the whole page comes back
    assert "Not grounded" in body
    assert '<mark class="ok" title="R2 · amount · E1 (checked against [E1])">1,234.56</mark>' in body
    assert '<mark class="bad" title="4.500 is not in the evidence cited in this sentence ([E2]); it has the digits ' \
           'of 45,00 (E2) with the separator moved' in body
    assert "(checked against [E2])" in body
    assert "<code>4.500</code> in “La de abril es de USD 4.500 [E2].”: 4.500 is not in the evidence" in body
    assert '<p class="answer pre-wrap">Su factura de marzo es de Bs. <mark class="ok"' in body
    assert "</mark> [E1]. La de abril es de USD <mark" in body


@pytest.mark.django_db
def test_warnings_and_derived_numbers_are_listed(analyst):
    answer = "En total debe USD 1.279,56."
    response = analyst.post(URL, {"answer": answer, "evidence": EVIDENCE})
    body = response.content.decode()
    assert "<h2 class=\"ok\">Grounded</h2>" in body
    assert '<mark class="ok" title="R4 · amount · E1, E2">1.279,56</mark>' in body
    assert "<code>1.279,56</code> = 1.234,56 (E1) + 45,00 (E2)" in body
    assert "states figures without a citation" in body


@pytest.mark.django_db
def test_the_customer_view_checkbox_turns_on_the_jargon_check(analyst):
    answer = "Revise su timezone_change_date."
    customer = analyst.post(URL, {"answer": answer, "evidence": "[]", "customer_view": "on"}).content.decode()
    assert "Not grounded" in customer and "timezone_change_date is an internal field name" in customer
    assert "Not grounded" not in analyst.post(URL, {"answer": answer, "evidence": "[]"}).content.decode()


@pytest.mark.django_db
def test_an_htmx_request_gets_only_the_result_partial(analyst):
    response = analyst.post(URL, {"answer": ANSWER, "evidence": EVIDENCE}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body and "<form" not in body and "<textarea" not in body
    assert '<mark class="bad"' in body and '<mark class="ok"' in body


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        ('[{"id": "E1", "text": "Factura", }]', "The evidence is not valid JSON (Expecting property name"),
        ('[{"id": "chunk-1", "text": "Factura"}]', "The evidence is malformed: evidence[0].id must be a string"),
        ('{"id": "E1"}', "The evidence is malformed: evidence must be a list"),
    ],
)
def test_bad_evidence_shows_the_error_and_keeps_what_was_typed(analyst, evidence, message):
    response = analyst.post(URL, {"answer": "Mi respuesta con 45,00 [E1].", "evidence": evidence})
    body = response.content.decode()
    assert response.status_code == 200
    assert '<p class="bad" role="alert">' + message in body.replace("&#x27;", "'").replace("&quot;", '"')
    assert "Mi respuesta con 45,00 [E1].</textarea>" in body
    assert evidence.replace('"', "&quot;") + "</textarea>" in body
    assert "<mark" not in body


@pytest.mark.django_db
def test_bad_evidence_through_htmx_returns_just_the_error(analyst):
    response = analyst.post(URL, {"answer": "x", "evidence": "nope"}, HTTP_HX_REQUEST="true")
    body = response.content.decode().strip()
    assert body.startswith('<p class="bad" role="alert">The evidence is not valid JSON')
    assert "<textarea" not in body


@pytest.mark.django_db
def test_a_supervisor_may_use_the_playground(client, make_staff):
    client.force_login(make_staff("sol", "supervisor"))
    assert client.get(URL).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["agent", "kb_editor"])
def test_other_roles_get_403_also_for_the_partial(client, make_staff, role):
    client.force_login(make_staff("ana", role))
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"answer": ANSWER, "evidence": EVIDENCE}, HTTP_HX_REQUEST="true").status_code == 403


@pytest.mark.django_db
def test_an_anonymous_visitor_is_sent_to_login(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


@pytest.mark.django_db
def test_the_navigation_links_analysts_to_the_playground(analyst):
    assert f'href="{URL}"' in analyst.get(reverse("home")).content.decode()

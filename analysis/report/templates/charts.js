for (const el of document.querySelectorAll("div.chart")) {
  const spec = JSON.parse(document.getElementById(el.id + "-spec").textContent);
  vegaEmbed(el, spec, {actions: false, renderer: "svg"})
    .then(() => el.setAttribute("data-rendered", "true"))
    .catch((error) => { el.textContent = "This chart could not be drawn: " + error;
                        console.error(error); });
}
